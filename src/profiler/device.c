/* device.c - GPU properties from the CUDA runtime. */
#include "device.h"

#include <dlfcn.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

/* The driver library the CUDA runtime loads; without it there is no GPU to
 * use, whatever the runtime's error says ("driver version is insufficient"). */
#define KB_DRIVER_LIB "libcuda.so.1"

/* Whether the NVIDIA driver library can be loaded (it stays loaded: the
 * runtime uses it next). */
static int driver_installed(void)
{
    return dlopen(KB_DRIVER_LIB, RTLD_LAZY | RTLD_GLOBAL) != NULL;
}

kb_status kb_device_count(int *n, kb_err *e)
{
    *n = 0;
    if (!driver_installed())
        return kb_fail(e, KB_EENV, "no NVIDIA driver found (" KB_DRIVER_LIB " is not installed)");
    cudaError_t ce = cudaGetDeviceCount(n);
    if (ce != cudaSuccess || *n == 0) {
        *n = 0;
        return kb_fail(e, KB_EENV, "no CUDA GPU available (%s)",
                       ce != cudaSuccess ? cudaGetErrorString(ce) : "no device found");
    }
    return KB_OK;
}

static void version_str(int v, char *buf, size_t n)
{
    snprintf(buf, n, "%d.%d", v / 1000, (v % 1000) / 10);
}

kb_status kb_device_query(int ordinal, kb_device *d, kb_err *e)
{
    kb_status st = KB_OK;
    struct cudaDeviceProp p;
    int clk = 0, mclk = 0, drv = 0, rt = 0;
    kb_device_init(d);
    KB_CUDA(cudaGetDeviceProperties(&p, ordinal));
    KB_CUDA(cudaDeviceGetAttribute(&clk, cudaDevAttrClockRate, ordinal));
    KB_CUDA(cudaDeviceGetAttribute(&mclk, cudaDevAttrMemoryClockRate, ordinal));
    KB_CUDA(cudaDriverGetVersion(&drv));
    KB_CUDA(cudaRuntimeGetVersion(&rt));
    d->ordinal = ordinal;
    kb_strlcpy(d->name, p.name, sizeof d->name);
    const unsigned char *u = (const unsigned char *)p.uuid.bytes;
    snprintf(d->uuid, sizeof d->uuid,
             "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", u[0],
             u[1], u[2], u[3], u[4], u[5], u[6], u[7], u[8], u[9], u[10], u[11], u[12], u[13],
             u[14], u[15]);
    d->cc_major = p.major;
    d->cc_minor = p.minor;
    d->sms = p.multiProcessorCount;
    d->memory_bytes = (int64_t)p.totalGlobalMem;
    d->l2_bytes = p.l2CacheSize;
    d->sm_clock_mhz = clk / 1000;
    d->mem_clock_mhz = mclk / 1000;
    d->mem_bus_bits = p.memoryBusWidth;
    version_str(drv, d->driver, sizeof d->driver);
    version_str(rt, d->runtime, sizeof d->runtime);
done:
    return st;
}

typedef CUresult (*ctx_get_current_fn)(CUcontext *);

kb_status kb_current_context(CUcontext *ctx, int *device, kb_err *e)
{
    kb_status st = KB_OK;
    void *p = NULL;
    enum cudaDriverEntryPointQueryResult q = cudaDriverEntryPointSymbolNotFound;
    ctx_get_current_fn get = NULL;
    *ctx = NULL;
    KB_CUDA(cudaGetDevice(device));
    KB_CUDA(cudaFree(NULL));
    KB_CUDA(cudaGetDriverEntryPointByVersion("cuCtxGetCurrent", &p, 12000,
                                               cudaEnableDefault, &q));
    if (q != cudaDriverEntryPointSuccess || !p) {
        st = kb_fail(e, KB_EENV,
                     "the CUDA driver has no cuCtxGetCurrent (query result %d)", (int)q);
        goto done;
    }
    memcpy(&get, &p, sizeof get);
    CUresult r = get(ctx);
    if (r != CUDA_SUCCESS || !*ctx)
        st = kb_fail(e, KB_EENV,
                     "cuCtxGetCurrent failed (CUresult %d) or gave no context", (int)r);
done:
    return st;
}
