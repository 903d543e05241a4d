/* The second seed example of docs/SPEC.md section 6 through the installed C API: TensorFlow
 * DepthToSpace, NHWC, DCR, block 2, input [1, 1, 1, 12] -> [1, 2, 2, 3]; then a volumetric
 * DepthToSpace (spatial rank 3, NDHWC, CRD, block 2x2x2). Exits 0 only if both results are
 * exactly what docs/SPEC.md says. */
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

    /* Rank 3: logical dims (N, C, D, H, W) = (1, 16, 1, 1, 1) -> (1, 2, 2, 2, 2). In CRD order
     * output channel c at block position k = (z*2 + y)*2 + x comes from input channel c*8 + k;
     * NDHWC stores the output element at k*2 + c. */
    float vol_in[16], vol_out[16];
    for (int i = 0; i < 16; i++) vol_in[i] = (float)i;
    const int64_t deep_dims[5] = {1, 16, 1, 1, 1}, space_dims[5] = {1, 2, 2, 2, 2};
    if (sd_tensor_init_dense_nd(&in, vol_in, SD_FLOAT32, SD_LAYOUT_NHWC, 5, deep_dims) != SD_OK ||
        sd_tensor_init_dense_nd(&out, vol_out, SD_FLOAT32, SD_LAYOUT_NHWC, 5, space_dims) != SD_OK) {
        fprintf(stderr, "bad tensor: %s\n", sd_last_error());
        return 1;
    }
    const sd_params volume = {SD_DEPTH_TO_SPACE, 2, 2, SD_ORDER_CRD, 0, /*block_d=*/2};
    if (sd_run(&volume, &in, &out) != SD_OK) {
        fprintf(stderr, "sd_run (rank 3) failed: %s\n", sd_last_error());
        return 1;
    }
    for (int k = 0; k < 8; k++) {
        for (int c = 0; c < 2; c++) {
            if (vol_out[k * 2 + c] != vol_in[c * 8 + k]) {
                fprintf(stderr, "wrong rank-3 result at k=%d c=%d\n", k, c);
                return 1;
            }
        }
    }
    printf("spacedepth %s (C): seed example and volumetric shuffle OK\n", spacedepth_version());
    return 0;
}
