#version 450
// A copy whose innermost axis moves, through 32x32 tiles in shared memory: reads run along the
// source's innermost axis B, writes along the destination's innermost axis A. The outer index
// space holds the other axes; args[0] is the source, args[1] the destination, their
// innerStrides[0] the strides along (A, B). Workgroup (x, y, z) is tile (A, B) of outer item z,
// looped when there are more than the dispatch holds: no division to find them.
#extension GL_GOOGLE_include_directive : require

layout(local_size_x = 32, local_size_y = 8, local_size_z = 1) in;

#include "tensor.glsl"

layout(set = 0, binding = 1, std430) readonly buffer Source { TENSOR_T src[]; };
layout(set = 0, binding = 2, std430) writeonly buffer Destination { TENSOR_T dst[]; };

// The padding column keeps the column reads of the second half free of bank conflicts.
shared float tile[32][33];

// i0: tiles along A, i1: tiles along B; innerShape[0].xy: extents of A and B. The loop bounds are
// the same for the whole workgroup, so the barriers inside them are in uniform control flow.
void main() {
  int extentA = p.innerShape[0].x, extentB = p.innerShape[0].y;
  ivec4 srcStrides = p.args[0].innerStrides[0], dstStrides = p.args[1].innerStrides[0];
  int lx = int(gl_LocalInvocationID.x), ly = int(gl_LocalInvocationID.y);
  for (int item = int(gl_WorkGroupID.z); item < p.count; item += int(gl_NumWorkGroups.z)) {
    ivec4 base = outerOffsets(item);
    for (int ta = int(gl_WorkGroupID.x); ta < p.i0; ta += int(gl_NumWorkGroups.x))
      for (int tb = int(gl_WorkGroupID.y); tb < p.i1; tb += int(gl_NumWorkGroups.y)) {
        int a0 = ta * 32, b0 = tb * 32;
        for (int k = 0; k < 32; k += 8) {
          int ia = a0 + ly + k, ib = b0 + lx;
          if (ia < extentA && ib < extentB)
            tile[ly + k][lx] = float(src[base.x + ia * srcStrides.x + ib * srcStrides.y]);
        }
        barrier();
        for (int k = 0; k < 32; k += 8) {
          int ia = a0 + lx, ib = b0 + ly + k;
          if (ia < extentA && ib < extentB)
            dst[base.y + ia * dstStrides.x + ib * dstStrides.y] = TENSOR_T(tile[lx][ly + k]);
        }
        barrier();  // before the next tile overwrites this one
      }
  }
}
