// Graph-private memory for a captured training step (docs/gpu_step.md, "Memory a graph
// keeps"). A CUDA graph bakes in the address of every buffer its kernels touch. In an eager step
// the temporaries (activations, gradients, workspaces) go back to the device's pool when the
// step ends and are handed to the next tensor; a replay would then write over live tensors. So,
// as PyTorch's graph-private memory pools do, every allocation the capturing thread makes on the
// captured GPU between the start and the end of a capture comes from an arena of its own:
//  - the arena is a PoolAllocator whose regions are allocations of the device's pool, so
//    memory_limit, the memory stats and the out-of-memory report still see every byte;
//  - blocks freed during the capture return to the arena and may be reused later in the same
//    capture (the replay runs the same launches in the same stream order, so that reuse is
//    exactly as safe as it was eagerly);
//  - after the capture nothing allocates from the arena again: a block freed later (the loss
//    tensor of the last replay) stays reserved for the graph, which keeps writing there;
//  - the graph holds the arena; tensors allocated in it hold it too, so its regions go back to
//    the device's pool only when the graph is destroyed and the last such tensor is gone.
//  - a block of the device's pool allocated before the capture and freed by the capturing
//    thread during it (the previous step's outputs, a tensor the step replaces) is kept by the
//    arena until the graph is destroyed, not handed to the next eager tensor: the graph may
//    have read or written it, and a replay would do so again;
//  - an arena never gives a region back to the device's pool before it dies, not even to retry
//    an allocation that ran out (pool_allocator.h, rule 13): an emptied region still holds the
//    addresses of the graph's temporaries, and the device's pool would hand them out again.
// Routing is per thread (the data pipeline's thread keeps allocating from the device's pool
// while the training thread captures) and per physical GPU (a workspace asked for through the
// first logical device of a split GPU lands in the same arena). Whether any thread is capturing
// on a GPU is process-wide (capture_under_way): the GPU's pools then keep their regions, since a
// cudaFree on the capturing thread would invalidate the capture.
#pragma once

#include <memory>
#include <string>

#include "core/device_registry.h"
#include "memory/allocator.h"

namespace gpuaccel {

// A new, empty arena whose regions come from `device_pool`.
std::shared_ptr<Allocator> make_capture_arena(std::shared_ptr<Allocator> device_pool);

// From now until end_capture_routing(gpu), this thread's allocations on physical GPU `gpu` come
// from `arena`. InternalError when this thread already routes that GPU (captures do not nest).
void begin_capture_routing(int gpu, std::shared_ptr<Allocator> arena);
// Stops the routing begun for `gpu` on this thread (nothing when there is none).
void end_capture_routing(int gpu);
// The arena that serves `device` on this thread now, or null (no capture, or not a GPU).
std::shared_ptr<Allocator> routed_capture_arena(const LogicalDevice& device);
// Whether some thread is between begin_capture_routing(gpu) and end_capture_routing(gpu).
bool capture_under_way(int gpu);
// The GPU pools' PoolOptions::keep_freed_block: true when this thread is capturing on physical
// GPU `gpu` into an arena of `pool`, which then keeps `block` until the arena dies.
class PoolAllocator;
bool keep_for_capture(int gpu, PoolAllocator& pool, void* block);
// The GPU pools' PoolOptions::regions_held: why physical GPU `gpu`'s pools keep their empty
// regions now ("" when no capture is under way on it).
std::string capture_holds_regions(int gpu);

}  // namespace gpuaccel
