import rasterio
from rasterio.features import rasterize
soils = gpd.read_file("data/mc_soils.shp")
boundary = gpd.read_file("data/mc_boundary.shp")
with rasterio.open("data/land_cover.tif") as src:
    lc = src.read(1); profile = src.profile; transform = src.transform; crs = src.crs
soils = soils.to_crs(crs); boundary = boundary.to_crs(crs)
inside = rasterize(boundary.geometry, out_shape=lc.shape, transform=transform) == 1
print(soils[["drclassdcd", "wdepannmin"]].describe(include="all"))
# %%
classes = sorted(soils["drclassdcd"].dropna().unique())
code = {c: i + 1 for i, c in enumerate(classes)}
drain = rasterize(zip(soils.geometry, soils["drclassdcd"].map(code)), out_shape=lc.shape, transform=transform, fill=0)
drain_score = np.select([drain == 1, drain == 2, drain == 3, drain == 4, drain == 5], [3, 1, 4, 5, 2], np.nan)
has_depth = soils[soils["wdepannmin"].notna()]
depth = rasterize(zip(has_depth.geometry, has_depth["wdepannmin"]), out_shape=lc.shape, transform=transform, fill=-1, dtype="float32")
depth_score = np.select([depth < 0, depth < 10, depth < 33, depth < 61, depth < 80, depth <= 92], [np.nan, 5, 4, 3, 2, 1], np.nan)
vulnerable = 5 * drain_score + 4 * depth_score
vulnerable[~inside] = np.nan
v = 1 + 9 * (vulnerable - np.nanmin(vulnerable)) / (np.nanmax(vulnerable) - np.nanmin(vulnerable))
print(np.nanmin(v), np.nanmax(v))
# %%
lc_scores = {11: 1, 21: 6, 22: 7, 23: 8, 24: 10, 31: 4, 41: 3, 42: 1, 43: 3, 52: 3, 71: 2, 81: 5, 82: 9, 90: 1, 95: 1}
lc_score = np.full(lc.shape, np.nan)
for k, s in lc_scores.items():
    lc_score[lc == k] = s
risk = 8 * v + 10 * lc_score
undeveloped = np.isin(lc, [31, 41, 43, 52, 71, 81, 90, 95])
keep = (risk > 100) & undeveloped
out = np.where(keep, lc, 0).astype("uint8")
profile.update(dtype="uint8", nodata=0, compress="deflate")
with rasterio.open("pred_results/undeveloped_areas.tif", "w", **profile) as dst:
    dst.write(out, 1)
print("high-risk cells:", int(np.nansum(risk > 100)), "undeveloped among them:", int(keep.sum()))
