// The product of one input slice (4 channels) with a mat4 weight block, the GEMM shaders' inner
// step.
#ifndef VKCNN_SLICE_PRODUCT_GLSL
#define VKCNN_SLICE_PRODUCT_GLSL

// acc + w x for one input slice's contribution to one output slice, as four multiply-adds per
// lane, one input channel at a time: `acc += w * x` is a matrix product (a multiply and three
// fused multiply-adds) and then an addition, five instructions per four products, which no
// compiler may fuse without reassociating.
vec4 addSlice(vec4 acc, mat4 w, vec4 x) {
  acc = fma(w[0], vec4(x.x), acc);
  acc = fma(w[1], vec4(x.y), acc);
  acc = fma(w[2], vec4(x.z), acc);
  return fma(w[3], vec4(x.w), acc);
}

#endif
