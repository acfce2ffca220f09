// A kernel of a header that corun cannot take is said (a warning: the
// header is shared) and left as it is, and so is its launch; the header's
// other kernel is transformed.
#include "header_refused_k.cuh"
void run(int *p) {
    good<<<4, 1>>>(p);
    bad<<<4, 1>>>(p);
}
