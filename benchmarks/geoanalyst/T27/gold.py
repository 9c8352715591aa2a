import rasterio
with rasterio.open("data/vulnerable_areas.tif") as src:
    vul = src.read(1, masked=True).astype("float64").filled(np.nan); profile = src.profile
with rasterio.open("data/land_cover.tif") as src:
    lc = src.read(1)
v = 1 + 9 * (vul - np.nanmin(vul)) / (np.nanmax(vul) - np.nanmin(vul))
scores = {11: 1, 21: 6, 22: 7, 23: 8, 24: 10, 31: 4, 41: 3, 42: 1, 43: 3, 52: 3, 71: 2, 81: 5, 82: 9, 90: 1, 95: 1}
lc_score = np.full(lc.shape, np.nan)
for k, s in scores.items():
    lc_score[lc == k] = s
risk = 8 * v + 10 * lc_score
print(np.nanmin(risk), np.nanmax(risk))
# %%
keep = (risk > 100) & np.isin(lc, [31, 41, 43, 52, 71, 81, 90, 95])
profile.update(dtype="uint8", nodata=0, compress="deflate")
with rasterio.open("pred_results/undeveloped_areas.tif", "w", **profile) as dst:
    dst.write(np.where(keep, lc, 0).astype("uint8"), 1)
print("cells kept:", int(keep.sum()))
