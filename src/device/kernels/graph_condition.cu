// Sets a conditional graph node's handle from an int32 in device memory (capture_if,
// capture_while: src/runtime/cuda/cuda_graph.cpp). cudaGraphSetConditional is a device runtime
// function, so the kernel is compiled with -rdc=true and linked with libcudadevrt.a.
extern "C" __global__ void weft_set_condition(unsigned long long handle, const int* element) {
    cudaGraphSetConditional(handle, *element != 0 ? 1u : 0u);
}
