/* A C11 application of the installed package (pkg-config): vkcnn/vkcnn.h must compile as C with
 * -std=c11 -pedantic, and the library it runs with must be the version its headers name. */
#include <vkcnn/vkcnn.h>

#include <stdio.h>
#include <string.h>

int main(void) {
  if (vkcnn_version() != VKCNN_VERSION || strcmp(vkcnn_version_string(), VKCNN_VERSION_STRING)) {
    fprintf(stderr, "c consumer: headers %s, library %s\n", VKCNN_VERSION_STRING,
            vkcnn_version_string());
    return 1;
  }
  printf("consumer (C11): vkcnn %s\n", vkcnn_version_string());
  return 0;
}
