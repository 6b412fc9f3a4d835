// Sets a conditional graph node's handle from an int32 in device memory (capture_if,
// capture_while: src/runtime/cuda/cuda_graph.cpp). cudaGraphSetConditional is a device runtime
// function, so the kernel is compiled with -rdc=true and linked with libcudadevrt.a.
// With `cap` (capture_while's max_iterations; 0: none), `runs` counts the body's runs since the
// replay reached the node (`first`: it reaches it now, before any run), and a condition still set
// after `cap` runs clears the handle and sets `exceeded`, a status word that the stream's next
// synchronization reads.
extern "C" __global__ void weft_set_condition(unsigned long long handle, const int* element, long long* runs,
                                              long long cap, unsigned long long* exceeded, int first) {
    bool go = *element != 0;
    if (cap > 0) {
        const long long n = first ? 0 : *runs + 1;
        *runs = n;
        if (go && n >= cap) {
            go = false;
            *exceeded = 1;
        }
    }
    cudaGraphSetConditional(handle, go ? 1u : 0u);
}
