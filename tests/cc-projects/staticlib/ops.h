// The library's interface: host functions only, no CUDA in sight.
#ifndef CC_PROJECTS_OPS_H
#define CC_PROJECTS_OPS_H

// y = a * x + y on the device, n elements.
int ops_saxpy(int a, const int *x, int *y, int n);
// counts[v % bins] for each value v of x, on the device.
int ops_histogram(const int *x, int n, unsigned *counts, int bins);

#endif
