/* The second seed example of docs/SPEC.md section 6 through the installed C API: TensorFlow
 * DepthToSpace, NHWC, DCR, block 2, input [1, 1, 1, 12] -> [1, 2, 2, 3]. Exits 0 only if the
 * result is exactly the seed's. */
#include <spacedepth/spacedepth_c.h>

#include <stdio.h>
#include <string.h>

int main(void) {
    float deep[12] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}, space[12];
    const float want[12] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12};
    sd_tensor in, out;
    /* dims (N, C, H, W) */
    if (sd_tensor_init_dense(&in, deep, SD_FLOAT32, SD_LAYOUT_NHWC, 1, 12, 1, 1) != SD_OK ||
        sd_tensor_init_dense(&out, space, SD_FLOAT32, SD_LAYOUT_NHWC, 1, 3, 2, 2) != SD_OK) {
        fprintf(stderr, "bad tensor: %s\n", sd_last_error());
        return 1;
    }
    const sd_params params = {SD_DEPTH_TO_SPACE, 2, 2, SD_ORDER_DCR, 0};
    if (sd_run(&params, &in, &out) != SD_OK) {
        fprintf(stderr, "sd_run failed: %s\n", sd_last_error());
        return 1;
    }
    if (memcmp(space, want, sizeof want) != 0) {
        fprintf(stderr, "wrong result\n");
        return 1;
    }
    printf("spacedepth %s (C): seed example OK\n", spacedepth_version());
    return 0;
}
