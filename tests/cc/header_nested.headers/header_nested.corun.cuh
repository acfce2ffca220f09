#include "corun/corun_launch.cuh"
#line 1 "./header_nested.cuh"
// Includes a kernel header and launches its kernel from a host function.
#pragma once
#include "header_k.corun.cuh"
inline void fill(int *p, int n) { k__corun_launch(::corun::config(n, 1), p); }
