/* stub_libcuda.c - a fake libcuda.so.1 for testing the launcher without a GPU.
 *
 * Exports the driver entry points flash::cuda::Driver resolves. Behaviour is
 * chosen by $FLASH_STUB_CUDA:
 *   ok (default)  memory is host memory (copies work), a launch runs nothing
 *                 but prints the kernel, grid, block, shared memory and every
 *                 parameter (sized by the PTX's .param list) to stderr
 *   no-device     cuInit fails with CUDA_ERROR_NO_DEVICE
 *   zero-devices  cuDeviceGetCount reports 0
 *   bad-ptx       cuModuleLoadDataEx fails with CUDA_ERROR_INVALID_PTX and a
 *                 two-line JIT error log
 *   launch-fails  cuLaunchKernel fails (CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES)
 *   sync-fails    cuCtxSynchronize fails (CUDA_ERROR_ILLEGAL_ADDRESS)
 * $FLASH_STUB_CUDA_CC (e.g. 90) sets the compute capability (default 80).
 * cuTensorMapEncodeTiled checks the global address's 16-byte alignment and
 * writes its parameters as text into the 128-byte map (a real driver writes
 * an opaque descriptor).
 * When the primary context is released the stub prints how many allocations
 * and modules are still live (the launcher must free everything).
 * Pointers print as buf<N>+<offset> (N: allocation order), so output is
 * deterministic; others (a caller's device memory) print as numbers, and a
 * launch on a stream other than the default one prints the stream.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef int CUresult;
typedef unsigned long long CUdeviceptr;

enum {
  SUCCESS = 0,
  INVALID_VALUE = 1,
  NO_DEVICE = 100,
  INVALID_PTX = 218,
  NOT_FOUND = 500,
  ILLEGAL_ADDRESS = 700,
  OUT_OF_RESOURCES = 701
};

static const char *mode(void) {
  const char *m = getenv("FLASH_STUB_CUDA");
  return m && *m ? m : "ok";
}
static int is(const char *m) { return strcmp(mode(), m) == 0; }

#define MAX_ALLOCS 256
static struct { char *p; size_t n; int live; } allocs[MAX_ALLOCS];
static int numAllocs = 0;
static int liveModules = 0;

#define MAX_PARAMS 256
struct Func {
  char name[256];
  int numParams;
  char types[MAX_PARAMS][8]; /* u64, u32, f32, b8, ... */
};
struct Module {
  char *ptx;
  struct Func fn;
};

CUresult cuGetErrorName(CUresult r, const char **s) {
  switch (r) {
  case SUCCESS: *s = "CUDA_SUCCESS"; return SUCCESS;
  case INVALID_VALUE: *s = "CUDA_ERROR_INVALID_VALUE"; return SUCCESS;
  case NO_DEVICE: *s = "CUDA_ERROR_NO_DEVICE"; return SUCCESS;
  case INVALID_PTX: *s = "CUDA_ERROR_INVALID_PTX"; return SUCCESS;
  case NOT_FOUND: *s = "CUDA_ERROR_NOT_FOUND"; return SUCCESS;
  case ILLEGAL_ADDRESS: *s = "CUDA_ERROR_ILLEGAL_ADDRESS"; return SUCCESS;
  case OUT_OF_RESOURCES: *s = "CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES"; return SUCCESS;
  }
  *s = NULL;
  return INVALID_VALUE;
}

CUresult cuGetErrorString(CUresult r, const char **s) {
  switch (r) {
  case SUCCESS: *s = "no error"; return SUCCESS;
  case INVALID_VALUE: *s = "invalid argument"; return SUCCESS;
  case NO_DEVICE: *s = "no CUDA-capable device is detected"; return SUCCESS;
  case INVALID_PTX: *s = "a PTX JIT compilation failed"; return SUCCESS;
  case NOT_FOUND: *s = "named symbol not found"; return SUCCESS;
  case ILLEGAL_ADDRESS: *s = "an illegal memory access was encountered"; return SUCCESS;
  case OUT_OF_RESOURCES: *s = "too many resources requested for launch"; return SUCCESS;
  }
  *s = NULL;
  return INVALID_VALUE;
}

CUresult cuInit(unsigned flags) {
  (void)flags;
  return is("no-device") ? NO_DEVICE : SUCCESS;
}

CUresult cuDeviceGetCount(int *n) {
  *n = is("zero-devices") ? 0 : 1;
  return SUCCESS;
}

CUresult cuDeviceGet(int *dev, int ordinal) {
  if (ordinal != 0)
    return INVALID_VALUE;
  *dev = 0;
  return SUCCESS;
}

CUresult cuDeviceGetName(char *name, int len, int dev) {
  (void)dev;
  snprintf(name, (size_t)len, "flashc stub device");
  return SUCCESS;
}

CUresult cuDeviceGetAttribute(int *v, int attr, int dev) {
  (void)dev;
  const char *cc = getenv("FLASH_STUB_CUDA_CC");
  int ccv = cc && *cc ? atoi(cc) : 80;
  switch (attr) {
  case 75: *v = ccv / 10; return SUCCESS;
  case 76: *v = ccv % 10; return SUCCESS;
  case 97: *v = 166912; return SUCCESS;
  }
  return INVALID_VALUE;
}

static int ctxToken;
CUresult cuDevicePrimaryCtxRetain(void **ctx, int dev) {
  (void)dev;
  *ctx = &ctxToken;
  return SUCCESS;
}

CUresult cuDevicePrimaryCtxRelease_v2(int dev) {
  (void)dev;
  int live = 0;
  for (int i = 0; i < numAllocs; ++i)
    live += allocs[i].live;
  fprintf(stderr, "stub-cuda: release live-allocations=%d live-modules=%d\n",
          live, liveModules);
  return SUCCESS;
}

CUresult cuCtxSetCurrent(void *ctx) {
  (void)ctx;
  return SUCCESS;
}

CUresult cuCtxSynchronize(void) {
  return is("sync-fails") ? ILLEGAL_ADDRESS : SUCCESS;
}

CUresult cuModuleLoadDataEx(void **module, const void *image, unsigned n,
                            int *options, void **values) {
  if (is("bad-ptx")) {
    char *log = NULL;
    size_t size = 0;
    for (unsigned i = 0; i < n; ++i) {
      if (options[i] == 5)
        log = (char *)values[i];
      if (options[i] == 6)
        size = (size_t)(uintptr_t)values[i];
    }
    if (log && size)
      snprintf(log, size, "ptxas application ptx input, line 7; error   : "
                          "stub rejects this PTX\nptxas fatal   : Ptx "
                          "assembly aborted due to errors\n");
    return INVALID_PTX;
  }
  struct Module *m = calloc(1, sizeof *m);
  m->ptx = strdup((const char *)image);
  *module = m;
  ++liveModules;
  return SUCCESS;
}

CUresult cuModuleUnload(void *module) {
  struct Module *m = module;
  free(m->ptx);
  free(m);
  --liveModules;
  return SUCCESS;
}

/* Reads the .param types of `.entry NAME(` from the PTX. */
CUresult cuModuleGetFunction(void **fn, void *module, const char *name) {
  struct Module *m = module;
  char pattern[300];
  snprintf(pattern, sizeof pattern, ".entry %s(", name);
  const char *p = strstr(m->ptx, pattern);
  if (!p)
    return NOT_FOUND;
  struct Func *f = &m->fn;
  snprintf(f->name, sizeof f->name, "%s", name);
  f->numParams = 0;
  const char *end = strchr(p, ')');
  p += strlen(pattern);
  while (p && end && p < end) {
    const char *q = strstr(p, ".param .");
    if (!q || q > end)
      break;
    q += strlen(".param .");
    int k = 0;
    while (q[k] && q[k] != ' ' && q[k] != '\t' && k < 7)
      ++k;
    if (f->numParams < MAX_PARAMS) {
      memcpy(f->types[f->numParams], q, (size_t)k);
      f->types[f->numParams][k] = 0;
      ++f->numParams;
    }
    p = q + k;
  }
  *fn = f;
  return SUCCESS;
}

CUresult cuFuncSetAttribute(void *fn, int attr, int value) {
  fprintf(stderr, "stub-cuda: cuFuncSetAttribute %s attr=%d value=%d\n",
          ((struct Func *)fn)->name, attr, value);
  return attr == 8 && value <= 166912 ? SUCCESS : INVALID_VALUE;
}

CUresult cuMemAlloc_v2(CUdeviceptr *ptr, size_t bytes) {
  if (numAllocs == MAX_ALLOCS || bytes == 0)
    return INVALID_VALUE;
  allocs[numAllocs].p = malloc(bytes);
  allocs[numAllocs].n = bytes;
  allocs[numAllocs].live = 1;
  *ptr = (CUdeviceptr)(uintptr_t)allocs[numAllocs].p;
  ++numAllocs;
  return SUCCESS;
}

static int find(CUdeviceptr ptr, size_t bytes, size_t *offset) {
  for (int i = 0; i < numAllocs; ++i) {
    uintptr_t base = (uintptr_t)allocs[i].p;
    if (allocs[i].live && ptr >= base && ptr + bytes <= base + allocs[i].n) {
      if (offset)
        *offset = (size_t)(ptr - base);
      return i;
    }
  }
  return -1;
}

CUresult cuMemFree_v2(CUdeviceptr ptr) {
  for (int i = 0; i < numAllocs; ++i)
    if (allocs[i].live && (uintptr_t)allocs[i].p == ptr) {
      free(allocs[i].p);
      allocs[i].live = 0;
      return SUCCESS;
    }
  return INVALID_VALUE;
}

CUresult cuMemcpyHtoD_v2(CUdeviceptr dst, const void *src, size_t bytes) {
  if (find(dst, bytes, NULL) < 0)
    return INVALID_VALUE;
  memcpy((void *)(uintptr_t)dst, src, bytes);
  return SUCCESS;
}

CUresult cuMemcpyDtoH_v2(void *dst, CUdeviceptr src, size_t bytes) {
  if (find(src, bytes, NULL) < 0)
    return INVALID_VALUE;
  memcpy(dst, (const void *)(uintptr_t)src, bytes);
  return SUCCESS;
}

CUresult cuMemsetD8_v2(CUdeviceptr dst, unsigned char v, size_t bytes) {
  if (find(dst, bytes, NULL) < 0)
    return INVALID_VALUE;
  memset((void *)(uintptr_t)dst, v, bytes);
  return SUCCESS;
}

CUresult cuTensorMapEncodeTiled(void *map, int type, uint32_t rank, void *addr,
                                const uint64_t *dims, const uint64_t *strides,
                                const uint32_t *box,
                                const uint32_t *elementStrides, int interleave,
                                int swizzle, int l2Promotion, int oobFill) {
  (void)elementStrides;
  (void)interleave;
  (void)l2Promotion;
  if (!map || rank < 1 || rank > 5 || ((uintptr_t)addr & 15))
    return INVALID_VALUE;
  char *out = map;
  size_t n = 0, cap = 128;
  n += snprintf(out + n, cap - n, "t%d r%u", type, rank);
  for (uint32_t d = 0; d < rank && n < cap; ++d)
    n += snprintf(out + n, cap - n, " %llu/%u/%llu", (unsigned long long)dims[d],
                  box[d],
                  (unsigned long long)(d ? strides[d - 1] : 0));
  if (n < cap)
    snprintf(out + n, cap - n, " s%d o%d", swizzle, oobFill);
  return SUCCESS;
}

CUresult cuLaunchKernel(void *fn, unsigned gx, unsigned gy, unsigned gz,
                        unsigned bx, unsigned by, unsigned bz, unsigned shared,
                        void *stream, void **params, void **extra) {
  struct Func *f = fn;
  if (is("launch-fails"))
    return OUT_OF_RESOURCES;
  if (extra)
    return INVALID_VALUE;
  fprintf(stderr,
          "stub-cuda: launch %s grid=(%u,%u,%u) block=(%u,%u,%u) shared=%u "
          "params=%d\n",
          f->name, gx, gy, gz, bx, by, bz, shared, f->numParams);
  if (stream) /* a caller's stream (the Python module's zero-copy path) */
    fprintf(stderr, "stub-cuda: stream %llu\n",
            (unsigned long long)(uintptr_t)stream);
  for (int i = 0; i < f->numParams; ++i) {
    const char *t = f->types[i];
    fprintf(stderr, "stub-cuda: param %d .%s = ", i, t);
    if (strstr(t, "64") && t[0] != 'f') {
      uint64_t v;
      memcpy(&v, params[i], 8);
      size_t off = 0;
      int k = find(v, 0, &off);
      if (k >= 0)
        fprintf(stderr, "buf%d+%zu\n", k, off);
      else
        fprintf(stderr, "%llu\n", (unsigned long long)v);
    } else if (strcmp(t, "f32") == 0) {
      float v;
      memcpy(&v, params[i], 4);
      fprintf(stderr, "%g\n", v);
    } else if (strcmp(t, "f64") == 0) {
      double v;
      memcpy(&v, params[i], 8);
      fprintf(stderr, "%g\n", v);
    } else if (strstr(t, "32")) {
      int32_t v;
      memcpy(&v, params[i], 4);
      fprintf(stderr, "%d\n", v);
    } else if (strstr(t, "16")) {
      uint16_t v;
      memcpy(&v, params[i], 2);
      fprintf(stderr, "0x%04x\n", v);
    } else {
      uint8_t v;
      memcpy(&v, params[i], 1);
      fprintf(stderr, "%u\n", v);
    }
  }
  return SUCCESS;
}
