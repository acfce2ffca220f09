// Every function nvcc's math_functions.h and .hpp declare for host and device,
// called from host code: nvcc accepts them all, so corun-cc must parse them
// (clang's CUDA headers lack some; corun-cc declares those for the parse only).
#include <cmath>
__global__ void kern(float *p) { p[threadIdx.x] = 1.0f; }
void h_abs() {  (void)abs(2); }
void h_acos() {  (void)acos(1.5); }
void h_acosf() {  (void)acosf(1.5f); }
void h_acosh() {  (void)acosh(1.5); }
void h_acoshf() {  (void)acoshf(1.5f); }
void h_asin() {  (void)asin(1.5); }
void h_asinf() {  (void)asinf(1.5f); }
void h_asinh() {  (void)asinh(1.5); }
void h_asinhf() {  (void)asinhf(1.5f); }
void h_atan() {  (void)atan(1.5); }
void h_atan2() {  (void)atan2(1.5, 1.5); }
void h_atan2f() {  (void)atan2f(1.5f, 1.5f); }
void h_atanf() {  (void)atanf(1.5f); }
void h_atanh() {  (void)atanh(1.5); }
void h_atanhf() {  (void)atanhf(1.5f); }
void h_cbrt() {  (void)cbrt(1.5); }
void h_cbrtf() {  (void)cbrtf(1.5f); }
void h_ceil() {  (void)ceil(1.5); }
void h_ceilf() {  (void)ceilf(1.5f); }
void h_copysign() {  (void)copysign(1.5, 1.5); }
void h_copysignf() {  (void)copysignf(1.5f, 1.5f); }
void h_cos() {  (void)cos(1.5); }
void h_cosf() {  (void)cosf(1.5f); }
void h_cosh() {  (void)cosh(1.5); }
void h_coshf() {  (void)coshf(1.5f); }
void h_cospi() {  (void)cospi(1.5); }
void h_cospif() {  (void)cospif(1.5f); }
void h_erf() {  (void)erf(1.5); }
void h_erfc() {  (void)erfc(1.5); }
void h_erfcf() {  (void)erfcf(1.5f); }
void h_erfcinv() {  (void)erfcinv(1.5); }
void h_erfcinvf() {  (void)erfcinvf(1.5f); }
void h_erfcx() {  (void)erfcx(1.5); }
void h_erfcxf() {  (void)erfcxf(1.5f); }
void h_erff() {  (void)erff(1.5f); }
void h_erfinv() {  (void)erfinv(1.5); }
void h_erfinvf() {  (void)erfinvf(1.5f); }
void h_exp() {  (void)exp(1.5); }
void h_exp10() {  (void)exp10(1.5); }
void h_exp10f() {  (void)exp10f(1.5f); }
void h_exp2() {  (void)exp2(1.5); }
void h_exp2f() {  (void)exp2f(1.5f); }
void h_expf() {  (void)expf(1.5f); }
void h_expm1() {  (void)expm1(1.5); }
void h_expm1f() {  (void)expm1f(1.5f); }
void h_fabs() {  (void)fabs(1.5); }
void h_fabsf() {  (void)fabsf(1.5f); }
void h_fdim() {  (void)fdim(1.5, 1.5); }
void h_fdimf() {  (void)fdimf(1.5f, 1.5f); }
void h_floor() {  (void)floor(1.5); }
void h_floorf() {  (void)floorf(1.5f); }
void h_fma() {  (void)fma(1.5, 1.5, 1.5); }
void h_fmaf() {  (void)fmaf(1.5f, 1.5f, 1.5f); }
void h_fmax() {  (void)fmax(1.5, 1.5); }
void h_fmaxf() {  (void)fmaxf(1.5f, 1.5f); }
void h_fmin() {  (void)fmin(1.5, 1.5); }
void h_fminf() {  (void)fminf(1.5f, 1.5f); }
void h_fmod() {  (void)fmod(1.5, 1.5); }
void h_fmodf() {  (void)fmodf(1.5f, 1.5f); }
void h_frexp() { int v1; (void)frexp(1.5, &v1); }
void h_frexpf() { int v1; (void)frexpf(1.5f, &v1); }
void h_hypot() {  (void)hypot(1.5, 1.5); }
void h_hypotf() {  (void)hypotf(1.5f, 1.5f); }
void h_ilogb() {  (void)ilogb(1.5); }
void h_ilogbf() {  (void)ilogbf(1.5f); }
void h_j0() {  (void)j0(1.5); }
void h_j0f() {  (void)j0f(1.5f); }
void h_j1() {  (void)j1(1.5); }
void h_j1f() {  (void)j1f(1.5f); }
void h_jn() {  (void)jn(2, 1.5); }
void h_jnf() {  (void)jnf(2, 1.5f); }
void h_labs() {  (void)labs(2L); }
void h_ldexp() {  (void)ldexp(1.5, 2); }
void h_ldexpf() {  (void)ldexpf(1.5f, 2); }
void h_lgamma() {  (void)lgamma(1.5); }
void h_lgammaf() {  (void)lgammaf(1.5f); }
void h_llabs() {  (void)llabs(2LL); }
void h_llmax() {  (void)llmax(2LL, 2LL); }
void h_llmin() {  (void)llmin(2LL, 2LL); }
void h_llrint() {  (void)llrint(1.5); }
void h_llrintf() {  (void)llrintf(1.5f); }
void h_llround() {  (void)llround(1.5); }
void h_llroundf() {  (void)llroundf(1.5f); }
void h_log() {  (void)log(1.5); }
void h_log10() {  (void)log10(1.5); }
void h_log10f() {  (void)log10f(1.5f); }
void h_log1p() {  (void)log1p(1.5); }
void h_log1pf() {  (void)log1pf(1.5f); }
void h_log2() {  (void)log2(1.5); }
void h_log2f() {  (void)log2f(1.5f); }
void h_logb() {  (void)logb(1.5); }
void h_logbf() {  (void)logbf(1.5f); }
void h_logf() {  (void)logf(1.5f); }
void h_lrint() {  (void)lrint(1.5); }
void h_lrintf() {  (void)lrintf(1.5f); }
void h_lround() {  (void)lround(1.5); }
void h_lroundf() {  (void)lroundf(1.5f); }
void h_max() {  (void)max(2, 2); }
void h_min() {  (void)min(2, 2); }
void h_modf() { double v1; (void)modf(1.5, &v1); }
void h_modff() { float v1; (void)modff(1.5f, &v1); }
void h_nearbyint() {  (void)nearbyint(1.5); }
void h_nearbyintf() {  (void)nearbyintf(1.5f); }
void h_nextafter() {  (void)nextafter(1.5, 1.5); }
void h_nextafterf() {  (void)nextafterf(1.5f, 1.5f); }
void h_normcdf() {  (void)normcdf(1.5); }
void h_normcdff() {  (void)normcdff(1.5f); }
void h_normcdfinv() {  (void)normcdfinv(1.5); }
void h_normcdfinvf() {  (void)normcdfinvf(1.5f); }
void h_pow() {  (void)pow(1.5, 1.5); }
void h_powf() {  (void)powf(1.5f, 1.5f); }
void h_rcbrt() {  (void)rcbrt(1.5); }
void h_rcbrtf() {  (void)rcbrtf(1.5f); }
void h_remainder() {  (void)remainder(1.5, 1.5); }
void h_remainderf() {  (void)remainderf(1.5f, 1.5f); }
void h_remquo() { int v2; (void)remquo(1.5, 1.5, &v2); }
void h_remquof() { int v2; (void)remquof(1.5f, 1.5f, &v2); }
void h_rint() {  (void)rint(1.5); }
void h_rintf() {  (void)rintf(1.5f); }
void h_round() {  (void)round(1.5); }
void h_roundf() {  (void)roundf(1.5f); }
void h_rsqrt() {  (void)rsqrt(1.5); }
void h_rsqrtf() {  (void)rsqrtf(1.5f); }
void h_scalbln() {  (void)scalbln(1.5, 2L); }
void h_scalblnf() {  (void)scalblnf(1.5f, 2L); }
void h_scalbn() {  (void)scalbn(1.5, 2); }
void h_scalbnf() {  (void)scalbnf(1.5f, 2); }
void h_sin() {  (void)sin(1.5); }
void h_sincos() { double v1; double v2; (void)sincos(1.5, &v1, &v2); }
void h_sincosf() { float v1; float v2; (void)sincosf(1.5f, &v1, &v2); }
void h_sincospi() { double v1; double v2; (void)sincospi(1.5, &v1, &v2); }
void h_sincospif() { float v1; float v2; (void)sincospif(1.5f, &v1, &v2); }
void h_sinf() {  (void)sinf(1.5f); }
void h_sinh() {  (void)sinh(1.5); }
void h_sinhf() {  (void)sinhf(1.5f); }
void h_sinpi() {  (void)sinpi(1.5); }
void h_sinpif() {  (void)sinpif(1.5f); }
void h_sqrt() {  (void)sqrt(1.5); }
void h_sqrtf() {  (void)sqrtf(1.5f); }
void h_tan() {  (void)tan(1.5); }
void h_tanf() {  (void)tanf(1.5f); }
void h_tanh() {  (void)tanh(1.5); }
void h_tanhf() {  (void)tanhf(1.5f); }
void h_tgamma() {  (void)tgamma(1.5); }
void h_tgammaf() {  (void)tgammaf(1.5f); }
void h_trunc() {  (void)trunc(1.5); }
void h_truncf() {  (void)truncf(1.5f); }
void h_ullmax() {  (void)ullmax(2LL, 2LL); }
void h_ullmin() {  (void)ullmin(2LL, 2LL); }
void h_umax() {  (void)umax(2, 2); }
void h_umin() {  (void)umin(2, 2); }
void h_y0() {  (void)y0(1.5); }
void h_y0f() {  (void)y0f(1.5f); }
void h_y1() {  (void)y1(1.5); }
void h_y1f() {  (void)y1f(1.5f); }
void h_yn() {  (void)yn(2, 1.5); }
void h_ynf() {  (void)ynf(2, 1.5f); }
void o1_acosh() {  (void)acosh(1.5f); }
void o2_asinh() {  (void)asinh(1.5f); }
void o3_atanh() {  (void)atanh(1.5f); }
void o4_cbrt() {  (void)cbrt(1.5f); }
void o5_copysign() {  (void)copysign(1.5, 1.5f); }
void o6_copysign() {  (void)copysign(1.5f, 1.5); }
void o7_copysign() {  (void)copysign(1.5f, 1.5f); }
void o8_cospi() {  (void)cospi(1.5f); }
void o9_erf() {  (void)erf(1.5f); }
void o10_erfc() {  (void)erfc(1.5f); }
void o11_erfcinv() {  (void)erfcinv(1.5f); }
void o12_erfcx() {  (void)erfcx(1.5f); }
void o13_erfinv() {  (void)erfinv(1.5f); }
void o14_exp10() {  (void)exp10(1.5f); }
void o15_exp2() {  (void)exp2(1.5f); }
void o16_expm1() {  (void)expm1(1.5f); }
void o17_fdim() {  (void)fdim(1.5f, 1.5f); }
void o18_fma() {  (void)fma(1.5f, 1.5f, 1.5f); }
void o19_fmax() {  (void)fmax(1.5f, 1.5f); }
void o20_fmin() {  (void)fmin(1.5f, 1.5f); }
void o21_hypot() {  (void)hypot(1.5f, 1.5f); }
void o22_ilogb() {  (void)ilogb(1.5f); }
void o23_j0() {  (void)j0(1.5f); }
void o24_j1() {  (void)j1(1.5f); }
void o25_jn() {  (void)jn(2, 1.5f); }
void o26_lgamma() {  (void)lgamma(1.5f); }
void o27_llrint() {  (void)llrint(1.5f); }
void o28_llround() {  (void)llround(1.5f); }
void o29_log1p() {  (void)log1p(1.5f); }
void o30_log2() {  (void)log2(1.5f); }
void o31_logb() {  (void)logb(1.5f); }
void o32_lrint() {  (void)lrint(1.5f); }
void o33_lround() {  (void)lround(1.5f); }
void o34_nearbyint() {  (void)nearbyint(1.5f); }
void o35_nextafter() {  (void)nextafter(1.5f, 1.5f); }
void o36_normcdf() {  (void)normcdf(1.5f); }
void o37_normcdfinv() {  (void)normcdfinv(1.5f); }
void o38_rcbrt() {  (void)rcbrt(1.5f); }
void o39_remainder() {  (void)remainder(1.5f, 1.5f); }
void o40_remquo() { int v2; (void)remquo(1.5f, 1.5f, &v2); }
void o41_rint() {  (void)rint(1.5f); }
void o42_round() {  (void)round(1.5f); }
void o43_rsqrt() {  (void)rsqrt(1.5f); }
void o44_scalbln() {  (void)scalbln(1.5f, 2L); }
void o45_scalbn() {  (void)scalbn(1.5f, 2); }
void o46_sincos() { float v1; float v2; (void)sincos(1.5f, &v1, &v2); }
void o47_sincospi() { float v1; float v2; (void)sincospi(1.5f, &v1, &v2); }
void o48_sinpi() {  (void)sinpi(1.5f); }
void o49_tgamma() {  (void)tgamma(1.5f); }
void o50_trunc() {  (void)trunc(1.5f); }
void o51_y0() {  (void)y0(1.5f); }
void o52_y1() {  (void)y1(1.5f); }
void o53_yn() {  (void)yn(2, 1.5f); }
int main() { float *p = 0; kern<<<1, 32>>>(p); return 0; }
