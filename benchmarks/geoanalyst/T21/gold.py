import rasterio
lc_table = {11: 10, 21: 8, 22: 7, 23: 8, 24: 9, 31: 6, 41: 2, 42: 1, 43: 2, 52: 3, 71: 3, 72: 3, 81: 4, 82: 6, 90: 4, 95: 4, 255: 10}
pr_table = {0: 1, 1: 3, 2: 6, 3: 9, 4: 10, 255: 10}
def reclassify(src_path, table, dst_path):
    with rasterio.open(src_path) as src:
        a = src.read(1); profile = src.profile
    lut = np.full(256, 10, dtype="uint8")
    for k, v in table.items():
        lut[k] = v
    out = lut[a]
    profile.update(dtype="uint8", nodata=None)
    with rasterio.open(dst_path, "w", **profile) as dst:
        dst.write(out, 1)
    print(dst_path, np.unique(out, return_counts=True))
reclassify("data/landCover.tif", lc_table, "pred_results/landCover_reclassified.tif")
reclassify("data/Protected_Status.tif", pr_table, "pred_results/protected_status_reclassified.tif")
