// A device function defined in smooth.cu and called from stencil.cu:
// relocatable device code (-rdc=true), joined by the device link.
#ifndef CC_PROJECTS_SMOOTH_H
#define CC_PROJECTS_SMOOTH_H

extern __device__ int smooth(const int *x, int i, int n);
void stencil_run(const int *x, int *y, int n);

#endif
