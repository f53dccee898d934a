// An ordinary CUDA program, the interceptor's sample: built with
// `nvcc -cudart shared`, it runs unchanged on a GPU, with or without
// libhyphys_intercept.so preloaded, and prints the same lines either way.
// tests/cudart_double/sample_twin.c makes the same calls in C, as nvcc's
// generated host code makes them, and must print the same.
#include <cstdio>
#include <vector>

#include "sample_report.h"

extern "C" __global__ void sample_axpy(float a, const float* x, float* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = a * x[i] + y[i];
}

extern "C" __global__ void sample_scale(float* y, float s, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] *= s;
}

extern "C" __global__ void sample_fill(float* z, float v, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) z[i] = v + (float)i;
}

int main() {
    const int n = 1000;
    int count = 0, version = 0, kept = 0, launches = 0, dev = -1;
    cudaRuntimeGetVersion(&version);
    if (cudaGetDeviceCount(&count) != cudaSuccess || count < 1) {
        printf("no device\n");
        return 1;
    }
    std::vector<float> hx(n), hy(n, 1.0f), hz(n);
    for (int i = 0; i < n; i++) hx[i] = (float)i;
    cudaSetDevice(0);
    float *x, *y, *z;
    cudaStream_t s;
    cudaMalloc(&x, n * sizeof(float));
    cudaMalloc(&y, n * sizeof(float));
    cudaMemcpy(x, hx.data(), n * sizeof(float), cudaMemcpyHostToDevice);
    cudaMemcpy(y, hy.data(), n * sizeof(float), cudaMemcpyHostToDevice);
    cudaStreamCreate(&s);
    // y = 1 + 12 i, then a quarter of it
    for (int k = 0; k < 6; k++) {
        sample_axpy<<<4, 256>>>(2.0f, x, y, n);
        launches++;
        kept += cudaGetDevice(&dev) == cudaSuccess && dev == 0;
    }
    for (int k = 0; k < 2; k++) {
        sample_scale<<<4, 256, 0, s>>>(y, 0.5f, n);
        launches++;
        kept += cudaGetDevice(&dev) == cudaSuccess && dev == 0;
    }
    // z = 7 + i on the last device
    int last = count - 1;
    cudaSetDevice(last);
    cudaMalloc(&z, n * sizeof(float));
    cudaMemset(z, 0, n * sizeof(float));
    sample_fill<<<4, 256>>>(z, 7.0f, n);
    launches++;
    kept += cudaGetDevice(&dev) == cudaSuccess && dev == last;
    cudaMemcpy(hz.data(), z, n * sizeof(float), cudaMemcpyDeviceToHost);
    cudaSetDevice(0);
    cudaDeviceSynchronize();
    cudaMemcpy(hy.data(), y, n * sizeof(float), cudaMemcpyDeviceToHost);
    cudaFree(x);
    cudaFree(y);
    cudaFree(z);
    cudaStreamDestroy(s);
    return hy_sample_report(hy.data(), hz.data(), n, version, launches, kept, (int)cudaGetLastError());
}
