// Neuron (activation) functions; the numbering matches vkcnn::NeuronType.
#ifndef VKCNN_NEURON_GLSL
#define VKCNN_NEURON_GLSL

// erf with |error| < 1.2e-7 (Numerical Recipes' erfc Chebyshev fit); GLSL has none.
float vkcnnErf(float x) {
  float z = abs(x);
  float t = 1.0 / (1.0 + 0.5 * z);
  float r = t * exp(-z * z - 1.26551223 +
                    t * (1.00002368 +
                    t * (0.37409196 +
                    t * (0.09678418 +
                    t * (-0.18628806 +
                    t * (0.27886807 +
                    t * (-1.13520398 +
                    t * (1.48851587 +
                    t * (-0.82215223 + t * 0.17087277)))))))));
  return x >= 0.0 ? 1.0 - r : r - 1.0;
}

float applyNeuron(NeuronParams n, float x, float slope) {
  switch (n.type) {
    case 0: return x;
    case 1: return max(x, 0.0);
    case 2: return n.a * x + n.b;
    case 3: return 1.0 / (1.0 + exp(-x));
    case 4: return clamp(n.a * x + n.b, 0.0, 1.0);
    case 5: return n.a * tanh(n.b * x);
    case 6: return abs(x);
    case 7: {
      float y = n.b * x;
      // log(1 + e^y) without overflow for large y.
      return n.a * (max(y, 0.0) + log(1.0 + exp(-abs(y))));
    }
    case 8: return x / (1.0 + abs(x));
    case 9: return x >= 0.0 ? x : n.a * (exp(x) - 1.0);
    case 10: return x >= 0.0 ? x : n.a * x;
    case 11: return min(max(x, n.a), n.b);
    case 12: return pow(n.a * x + n.b, n.c);
    case 13: return n.c <= 0.0 ? exp(n.a * x + n.b) : pow(n.c, n.a * x + n.b);
    case 14: return n.c <= 0.0 ? log(n.a * x + n.b) : log(n.a * x + n.b) / log(n.c);
    case 15: return x * clamp(x / 6.0 + 0.5, 0.0, 1.0);
    case 16: return 0.5 * x * (1.0 + vkcnnErf(x * 0.70710678118654752));
    case 17: return n.b * (x > 0.0 ? x : n.a * (exp(x) - 1.0));
    case 18: return x >= 0.0 ? x : slope * x;
    case 19: return x / (1.0 + exp(-x));
  }
  return x;
}

#endif
