// Maximum, minimum and clamp that propagate NaN, as PyTorch's and onnxruntime's kernels do
// (torch.maximum, relu, max pooling, clamp: a NaN operand gives NaN).
//
// GLSL leaves max(), min() and clamp() undefined for a NaN operand, and drivers return the other
// operand (NVIDIA's do; lavapipe's LLVM maxnum too): relu(NaN) became 0 and a NaN pixel vanished
// in max pooling, so squeezenet with NaN pixels gave finite logits where PyTorch gives NaN. Each
// function here picks the NaN with isnan() and a select, so the result does not depend on what the
// driver's max() does with it; a compare and a select per element, nothing in memory traffic.
// Infinities need nothing: max/min order them exactly.
//
// Pattern to avoid elsewhere: `x >= 0 ? x : 0`, step() and mix(.., bvec) are selects on an
// ordered compare, which is false for NaN: they return the "else" operand, so they propagate NaN
// only when that operand is computed from x.
#ifndef VKCNN_NAN_GLSL
#define VKCNN_NAN_GLSL

float nanMax(float a, float b) { return isnan(a) ? a : isnan(b) ? b : max(a, b); }
float nanMin(float a, float b) { return isnan(a) ? a : isnan(b) ? b : min(a, b); }
vec4 nanMax(vec4 a, vec4 b) { return mix(mix(max(a, b), b, isnan(b)), a, isnan(a)); }
vec4 nanMin(vec4 a, vec4 b) { return mix(mix(min(a, b), b, isnan(b)), a, isnan(a)); }

// clamp(x, lo, hi) as min(max(x, lo), hi) (hi wins when lo > hi), NaN when x is NaN; the bounds
// are parameters, never NaN.
float nanClamp(float x, float lo, float hi) { return isnan(x) ? x : min(max(x, lo), hi); }
vec4 nanClamp(vec4 x, float lo, float hi) { return mix(min(max(x, lo), hi), x, isnan(x)); }

#endif
