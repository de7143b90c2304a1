#version 450
// A copy whose innermost axis moves, through 32x32 tiles in shared memory: reads run along the
// source's innermost axis B, writes along the destination's innermost axis A; up to 4 other axes
// form the outer index space (TensorTransposePush in tensor_interface.h). Workgroup (x, y, z) is
// tile (A, B) of outer item z, looped when there are more than the dispatch holds: no division to
// find them. The parameters are push constants: the first load waits on no parameter load.
#extension GL_GOOGLE_include_directive : require

layout(local_size_x = 32, local_size_y = 8, local_size_z = 1) in;

#define VKCNN_TENSOR_PUSH 1
#include "tensor.glsl"

layout(push_constant) uniform Push { TensorTransposePush pc; };
layout(set = 0, binding = 1, std430) readonly buffer Source { TENSOR_T src[]; };
layout(set = 0, binding = 2, std430) writeonly buffer Destination { TENSOR_T dst[]; };

// The padding column keeps the column reads of the second half free of bank conflicts.
shared float tile[32][33];

// Source and destination offsets of outer item `index`.
ivec2 outerOffsets(int index) {
  ivec2 off = ivec2(pc.sourceOffset, pc.destinationOffset);
  for (int j = pc.rank - 1; j >= 0; --j) {
    int extent = pc.shape[j];
    int i = index % extent;
    index /= extent;
    off += i * ivec2(pc.sourceStrides[j], pc.destinationStrides[j]);
  }
  return off;
}

// The loop bounds are the same for the whole workgroup, so the barriers inside them are in
// uniform control flow.
void main() {
  int lx = int(gl_LocalInvocationID.x), ly = int(gl_LocalInvocationID.y);
  for (int item = int(gl_WorkGroupID.z); item < pc.count; item += int(gl_NumWorkGroups.z)) {
    ivec2 base = outerOffsets(item);
    for (int ta = int(gl_WorkGroupID.x); ta < pc.tilesA; ta += int(gl_NumWorkGroups.x))
      for (int tb = int(gl_WorkGroupID.y); tb < pc.tilesB; tb += int(gl_NumWorkGroups.y)) {
        int a0 = ta * 32, b0 = tb * 32;
        for (int k = 0; k < 32; k += 8) {
          int ia = a0 + ly + k, ib = b0 + lx;
          if (ia < pc.extentA && ib < pc.extentB)
            tile[ly + k][lx] = float(src[base.x + ia * pc.sourceA + ib * pc.sourceB]);
        }
        barrier();
        for (int k = 0; k < 32; k += 8) {
          int ia = a0 + lx, ib = b0 + ly + k;
          if (ia < pc.extentA && ib < pc.extentB)
            dst[base.y + ia * pc.destinationA + ib * pc.destinationB] = TENSOR_T(tile[lx][ly + k]);
        }
        barrier();  // before the next tile overwrites this one
      }
  }
}
