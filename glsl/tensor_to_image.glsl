// A tensor view into sliced image layers (tensor_to_image.comp, tensor16_to_image.comp): image
// channel c of image n at pixel (x, y) is tensor element (n, c, y, x) (TensorConversionPush in
// tensor_interface.h). The variant is the image's format; the including file fixes the tensor's.
//
// One invocation per texel (4 channels of one pixel), the pixels of a layer flattened along x:
// consecutive invocations take consecutive pixels of a row, so each of the 4 channel loads of a
// warp reads consecutive elements of an NCHW tensor, and a small image (7x7) wastes at most 63
// invocations per slice. Workgroup y is the slice, z the image: no division for either. The
// parameters are push constants: nothing but the data loads stands between launch and store.

layout(local_size_x = 64, local_size_y = 1, local_size_z = 1) in;

#define VKCNN_TENSOR_PUSH 1
#include "interface.h"
#include "tensor.glsl"

layout(push_constant) uniform Push { TensorConversionPush pc; };
layout(set = 0, binding = 1, std430) readonly buffer Source { TENSOR_T src[]; };
layout(set = 0, binding = 2, VKCNN_OUTPUT_FORMAT) uniform VKCNN_OUTPUT_IMAGE uDestination;

#include "image_io.glsl"

// Workgroups: x over the pixels (looped when there are more), y the slice, z the image.
void main() {
  int t = int(gl_WorkGroupID.y), img = int(gl_WorkGroupID.z);
  ImageView v;
  v.layersPerImage = pc.layersPerImage;
  v.featureChannels = pc.channels;
  v.channelShift = pc.channelShift;
  v.paddingFrom = pc.paddingFrom;
  ivec4 s = pc.strides;
  int c0 = firstChannelOfSlice(v, t);
  // Channels of this slice inside the window: [k0, k1) of its 4.
  int k0 = max(0, -c0), k1 = min(4, pc.channels - c0);
  int first = pc.offset + img * s.x + c0 * s.y;
  // Rows one after another in the tensor (NCHW): the address needs no row and column.
  bool rows = s.z == pc.width * s.w;
  int step = int(gl_NumWorkGroups.x) * 64;
  for (int q = int(gl_GlobalInvocationID.x); q < pc.pixels; q += step) {
    int y = q / pc.width, x = q - y * pc.width;
    int base = first + (rows ? q * s.w : y * s.z + x * s.w);
    // The loads before any use, so that all 4 are in flight together.
    vec4 value = vec4(0.0);
    for (int k = 0; k < 4; ++k)
      if (k >= k0 && k < k1) value[k] = float(src[base + k * s.y]);
    // (writeSlice saturates finite values beyond float16's range, as Image::writeBytes does.)
    writeSlice(v, ivec2(x, y), img, t, value);
  }
}
