// Grid-wide synchronisation cannot work when only some blocks run.
#include <cooperative_groups.h>
namespace cg = cooperative_groups;

__global__ void two_phase(float *p, int n)
{
    cg::grid_group grid = cg::this_grid();
    p[grid.thread_rank()] += 1.0f;
    grid.sync();
    p[n - 1 - grid.thread_rank()] *= 2.0f;
}
