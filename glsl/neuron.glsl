// Neuron (activation) functions, numbered by interface.h's VKCNN_NEURON_* (vkcnn::NeuronType's
// numbers, which the host checks against the enum).
//
// One table, on 4 channels at once: the image kernels hold a texel of 4 channels, and one switch
// per texel is a quarter of the code and of the branches of one per channel. The switch is
// [[dont_flatten]]: the type is uniform across the dispatch, and a flattened switch would evaluate
// every case (exp, log, pow, tanh, erf...) for every channel. Both together made the networks'
// convolution epilogues 5-14% faster on the H200 (bench/NOTES.md, 2026-11-26).
#ifndef VKCNN_NEURON_GLSL
#define VKCNN_NEURON_GLSL

#extension GL_EXT_control_flow_attributes : enable

#include "nan.glsl"

// erf with |error| < 1.2e-7 (Numerical Recipes' erfc Chebyshev fit); GLSL has none.
vec4 vkcnnErf4(vec4 x) {
  vec4 z = abs(x);
  vec4 t = 1.0 / (1.0 + 0.5 * z);
  vec4 r = t * exp(-z * z - 1.26551223 +
                   t * (1.00002368 +
                   t * (0.37409196 +
                   t * (0.09678418 +
                   t * (-0.18628806 +
                   t * (0.27886807 +
                   t * (-1.13520398 +
                   t * (1.48851587 +
                   t * (-0.82215223 + t * 0.17087277)))))))));
  return mix(r - 1.0, 1.0 - r, greaterThanEqual(x, vec4(0.0)));
}

float vkcnnErf(float x) { return vkcnnErf4(vec4(x)).x; }

// tanh, +-1 past |x| = 10 (where float's tanh rounds to 1) and NaN for NaN. GLSL's tanh may be
// (e^2x - 1) / (e^2x + 1), inf / inf at large |x|, and Mesa clamps x to [-10, 10] first, which
// turns NaN into +-1.
vec4 vkcnnTanh4(vec4 x) {
  const vec4 y = mix(tanh(x), sign(x), greaterThan(abs(x), vec4(10.0)));
  return mix(y, x, isnan(x));
}

// Neuron `type` with n's parameters: n.type, or a constant where the shader knows it (the switch
// then folds away). `slope` is PReLU's per-channel slope (VKCNN_NEURON_PRELU), unused otherwise.
// mix() with a bvec selects, so a case's other branch (an infinity, a NaN) never reaches the
// result.
//
// NaN and the infinities come out as PyTorch's and onnxruntime's kernels give them (the double
// reference, vkcnn::applyNeuron, computes the same formulas): NaN in, NaN out, for every neuron;
// relu(+inf) = +inf, sigmoid(-inf) = 0, tanh(+-inf) = +-1, elu(-inf) = -a; where those kernels'
// formula gives inf * 0 or inf / inf (hard-swish, gelu, silu at -inf, softsign at +-inf) so does
// this one. max/min/clamp go through nan.glsl (the driver's own may drop the NaN); a select on
// `positive` is false for NaN and picks the branch computed from x, which is NaN.
vec4 applyNeuronOfType(int type, NeuronParams n, vec4 x, vec4 slope) {
  const bvec4 positive = greaterThanEqual(x, vec4(0.0));
  [[dont_flatten]] switch (type) {
    case VKCNN_NEURON_NONE: return x;
    case VKCNN_NEURON_RELU: return nanMax(x, vec4(0.0));
    case VKCNN_NEURON_LINEAR: return n.a * x + n.b;
    case VKCNN_NEURON_SIGMOID: return 1.0 / (1.0 + exp(-x));
    case VKCNN_NEURON_HARD_SIGMOID: return nanClamp(n.a * x + n.b, 0.0, 1.0);
    case VKCNN_NEURON_TANH: return n.a * vkcnnTanh4(n.b * x);
    case VKCNN_NEURON_ABSOLUTE: return abs(x);
    case VKCNN_NEURON_SOFTPLUS: {
      vec4 y = n.b * x;
      // log(1 + e^y) without overflow for large y.
      return n.a * (nanMax(y, vec4(0.0)) + log(1.0 + exp(-abs(y))));
    }
    case VKCNN_NEURON_SOFTSIGN: return x / (1.0 + abs(x));
    case VKCNN_NEURON_ELU: return mix(n.a * (exp(x) - 1.0), x, positive);
    case VKCNN_NEURON_LEAKY_RELU: return mix(n.a * x, x, positive);
    case VKCNN_NEURON_CLAMP: return nanClamp(x, n.a, n.b);
    case VKCNN_NEURON_POWER: {
      // GLSL leaves pow and log of NaN undefined (lavapipe's pow gives 0): the NaN is selected,
      // here and in the two cases below.
      const vec4 base = n.a * x + n.b;
      return mix(pow(base, vec4(n.c)), base, isnan(base));
    }
    case VKCNN_NEURON_EXPONENTIAL: {
      const vec4 y = n.a * x + n.b;
      return mix(n.c <= 0.0 ? exp(y) : pow(vec4(n.c), y), y, isnan(y));
    }
    case VKCNN_NEURON_LOGARITHM: {
      const vec4 y = n.a * x + n.b;
      return mix(n.c <= 0.0 ? log(y) : log(y) / log(n.c), y, isnan(y));
    }
    case VKCNN_NEURON_HARD_SWISH: return x * clamp(x / 6.0 + 0.5, 0.0, 1.0);
    case VKCNN_NEURON_GELU: return 0.5 * x * (1.0 + vkcnnErf4(x * 0.70710678118654752));
    case VKCNN_NEURON_SELU: return n.b * mix(n.a * (exp(x) - 1.0), x, greaterThan(x, vec4(0.0)));
    case VKCNN_NEURON_PRELU: return mix(slope * x, x, positive);
    case VKCNN_NEURON_SILU: return x / (1.0 + exp(-x));
  }
  return x;
}

vec4 applyNeuron4(NeuronParams n, vec4 x, vec4 slope) {
  return applyNeuronOfType(n.type, n, x, slope);
}

float applyNeuron(NeuronParams n, float x, float slope) {
  return applyNeuron4(n, vec4(x), vec4(slope)).x;
}

#ifdef VKCNN_NEURON_SLOPES
// PReLU's slopes of channels c, each clamped into the first `count` (zero when there are none),
// from the `slopes` buffer that a shader defining VKCNN_NEURON_SLOPES declares.
vec4 neuronSlopes(ivec4 c, int count) {
  if (count <= 0) return vec4(0.0);
  const ivec4 s = clamp(c, 0, count - 1);
  return vec4(slopes[s.x], slopes[s.y], slopes[s.z], slopes[s.w]);
}
#endif

#endif
