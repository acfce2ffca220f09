// A member function reading blockIdx cannot be cloned next to its class.
struct Indexer {
    int width;
    __device__ int at() const { return (int)blockIdx.x * width + (int)threadIdx.x; }
};

__global__ void with_method(int *p, Indexer ix)
{
    p[ix.at()] = 1;
}
