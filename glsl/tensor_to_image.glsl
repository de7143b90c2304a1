// A tensor view into sliced image layers (tensor_to_image.comp, tensor16_to_image.comp): image
// channel c of image n at pixel (x, y) is tensor element (n, c, y, x) at args[0].offset + n*s0 +
// c*s1 + y*s2 + x*s3. The variant is the image's format; the including file fixes the tensor's.

layout(local_size_x = 8, local_size_y = 8, local_size_z = 1) in;

#include "interface.h"
#include "tensor.glsl"

layout(set = 0, binding = 1, std430) readonly buffer Source { TENSOR_T src[]; };
layout(set = 0, binding = 2, VKCNN_OUTPUT_FORMAT) uniform image2DArray uDestination;

#include "image_io.glsl"

// i0 width, i1 height, i2 images, i3 slices per image, i4 channel shift, i5 layers per image,
// innerCount channels, flags paddingFrom.
void main() {
  ivec3 gid = ivec3(gl_GlobalInvocationID);
  if (gid.x >= p.i0 || gid.y >= p.i1 || gid.z >= p.i2 * p.i3) return;
  int img = gid.z / p.i3;
  int t = gid.z % p.i3;
  ImageView v;
  v.layersPerImage = p.i5;
  v.featureChannels = p.innerCount;
  v.channelShift = p.i4;
  v.paddingFrom = p.flags;
  ivec4 s = p.args[0].strides[0];
  int base = p.args[0].offset + img * s.x + gid.y * s.z + gid.x * s.w;
  int c0 = firstChannelOfSlice(v, t);
  vec4 value = vec4(0.0);
  for (int k = 0; k < 4; ++k) {
    int c = c0 + k;
    if (c < 0 || c >= p.innerCount) continue;
    float x = float(src[base + c * s.y]);
#ifdef VKCNN_VARIANT_f16
    // Saturate as Image::writeBytes does: a finite value must not become an infinity.
    if (abs(x) > 65504.0 && !isinf(x)) x = sign(x) * 65504.0;
#endif
    value[k] = x;
  }
  writeSlice(v, gid.xy, img, t, value);
}
