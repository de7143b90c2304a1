/* A C11 application of the installed package (pkg-config vkcnn_onnx): vkcnn/vkcnn.h must compile
 * as C with -std=c11 -pedantic, the library must be the version its headers name, and a model runs
 * through the C API (a classifier head: mean over 3x3 pixels of 4 channels, then 4 -> 5 Gemm).
 *   c_consumer MODEL.onnx   (fuzz/corpus/onnx/gap_flatten_gemm.onnx) */
#include <vkcnn/vkcnn.h>

#include <math.h>
#include <stdio.h>
#include <string.h>

static double ramp(int i) {
  return (double)(i % 7 - 3) * 0.125;
}

int main(int argc, char** argv) {
  if (argc != 2) return 2;
  if (vkcnn_version() != VKCNN_VERSION || strcmp(vkcnn_version_string(), VKCNN_VERSION_STRING)) {
    fprintf(stderr, "c consumer: headers %s, library %s\n", VKCNN_VERSION_STRING,
            vkcnn_version_string());
    return 1;
  }
  vkcnn_session_options options;
  vkcnn_session_options_init(&options);
  options.precision = VKCNN_CHANNEL_FORMAT_FLOAT32;
  vkcnn_session session;
  if (vkcnn_session_create(NULL, argv[1], &options, &session) != VKCNN_SUCCESS) {
    fprintf(stderr, "c consumer: %s\n", vkcnn_last_error());
    return 1;
  }
  float x[36], y[5];
  for (int i = 0; i < 36; ++i) x[i] = (float)(i % 11 - 5) * 0.25f;
  const float* inputs[1] = {x};
  float* outputs[1] = {y};
  if (vkcnn_session_run(session, inputs, 1, outputs, 1) != VKCNN_SUCCESS) {
    fprintf(stderr, "c consumer: %s\n", vkcnn_last_error());
    return 1;
  }
  double worst = 0;
  for (int o = 0; o < 5; ++o) {
    double sum = ramp(o);
    for (int c = 0; c < 4; ++c) {
      double mean = 0;
      for (int p = 0; p < 9; ++p) mean += x[c * 9 + p] / 9.0;
      sum += ramp(o * 4 + c) * mean;
    }
    double d = fabs(sum - y[o]);
    if (!(d <= worst)) worst = d;
  }
  vkcnn_context context;
  if (vkcnn_session_context(session, &context) != VKCNN_SUCCESS) return 1;
  vkcnn_session_destroy(session);
  const uint64_t messages = vkcnn_context_validation_message_count(context);
  vkcnn_context_destroy(context);
  printf("consumer (C11, pkg-config): vkcnn %s, session run, largest difference %.1e\n",
         vkcnn_version_string(), worst);
  return worst < 1e-4 && messages == 0 ? 0 : 1;
}
