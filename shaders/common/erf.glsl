// erf and exact (erf-based) GELU for f32 kernels: GLSL has no erf.
//
// |x| < ERF_SPLIT: erf(x) = 2/sqrt(pi) sum_n (-1)^n x^(2n+1) / (n! (2n+1)),
// n <= 9 (truncation below 4e-9 at |x| = 0.8; the terms shrink, so f32
// Horner adds only a couple of ulps).
// |x| >= ERF_SPLIT: erfc(x) = t exp(-x^2 + P(t)), t = 1/(1 + x/2), the
// Chebyshev fit of Numerical Recipes' erfcc (relative error < 1.2e-7). It
// cancels catastrophically near 0, hence the series there.
// Evaluated in f32 with a correctly rounded exp, |erf error| <= 1.1e-7 over
// the whole line and gelu(z) is within 1.2e-7 |z| (tests/abs_conv_test.cc
// checks the device's result against std::erf); a device's exp adds its own
// error (Vulkan allows 3 + 2|arg| ulp).
#ifndef PEBENCH_ERF_GLSL
#define PEBENCH_ERF_GLSL

const float ERF_SPLIT = 0.8;

// erf(a) for |a| < ERF_SPLIT.
vec4 erf_series(vec4 a) {
  const vec4 s = a * a;
  vec4 p = vec4(-1.6365844691234924e-07);  // c_n = (-1)^n 2/sqrt(pi) / (n! (2n+1)), n = 9 .. 0
  p = p * s + 1.6462114365889246e-06;
  p = p * s - 1.492565035840625e-05;
  p = p * s + 0.00012055332981789664;
  p = p * s - 0.0008548327023450852;
  p = p * s + 0.005223977625442188;
  p = p * s - 0.026866170645131252;
  p = p * s + 0.11283791670955126;
  p = p * s - 0.37612638903183754;
  p = p * s + 1.1283791670955126;
  return a * p;
}

// erfc(a) for a >= ERF_SPLIT.
vec4 erfc_tail(vec4 a) {
  const vec4 t = 1.0 / (1.0 + 0.5 * a);
  vec4 p = vec4(0.17087277);
  p = p * t - 0.82215223;
  p = p * t + 1.48851587;
  p = p * t - 1.13520398;
  p = p * t + 0.27886807;
  p = p * t - 0.18628806;
  p = p * t + 0.09678418;
  p = p * t + 0.37409196;
  p = p * t + 1.00002368;
  p = p * t - 1.26551223;
  return t * exp(p - a * a);
}

// gelu(z) = 0.5 z (1 + erf(z / sqrt 2)). For z < 0 in the tail 1 + erf is
// erfc(|z|/sqrt 2) itself, so small outputs keep their relative accuracy.
vec4 gelu_erf(vec4 z) {
  const vec4 a = abs(z) * 0.70710678118654752;
  const bvec4 tail = greaterThanEqual(a, vec4(ERF_SPLIT));
  const vec4 e = erf_series(min(a, vec4(ERF_SPLIT)));
  const vec4 q = erfc_tail(max(a, vec4(ERF_SPLIT)));
  const vec4 one_plus_erf_abs = mix(1.0 + e, 2.0 - q, tail);   // 1 + erf(|z|/sqrt 2)
  const vec4 one_minus_erf_abs = mix(1.0 - e, q, tail);        // 1 - erf(|z|/sqrt 2)
  return 0.5 * z * mix(one_plus_erf_abs, one_minus_erf_abs, lessThan(z, vec4(0.0)));
}

#endif
