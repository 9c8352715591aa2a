import rasterio
from rasterio.warp import reproject, Resampling
import matplotlib.pyplot as plt
def nbr(path):
    with rasterio.open(path) as src:
        nir, swir = src.read(5).astype("float64"), src.read(7).astype("float64")
    return (nir - swir) / (nir + swir)
severity = nbr("data/Before_L8.tif") - nbr("data/After_L8.tif")
with rasterio.open("data/DEM_30m.tif") as src:
    dem = src.read(1).astype("float64"); profile = src.profile; transform = src.transform; crs = src.crs
gy, gx = np.gradient(dem, 30.0)
slope = np.degrees(np.arctan(np.hypot(gx, gy)))
print(severity.min(), severity.max(), slope.max())
# %%
lc = np.zeros(dem.shape, dtype="uint8")
with rasterio.open("data/Sonoma_NLCD2011.tif") as src:
    reproject(rasterio.band(src, 1), lc, dst_transform=transform, dst_crs=crs, resampling=Resampling.nearest, dst_nodata=0)
lc_class = np.select([lc == 0, lc <= 12, lc <= 22, lc == 23, lc <= 31, lc <= 44, lc == 52, lc == 71, lc == 81, lc == 82, lc <= 95],
                     [np.nan, 1, 3, 4, 5, 1, 3, 4, 3, 4, 2], np.nan)
bs_class = np.digitize(severity, [0.10, 0.27, 0.44, 0.66]) + 1
slope_class = np.digitize(slope, [5, 15, 25, 35]) + 1
risk = 0.30 * bs_class + 0.55 * slope_class + 0.15 * lc_class
profile.update(dtype="float32", nodata=-9999.0)
with rasterio.open("pred_results/landslide_risk.tif", "w", **profile) as dst:
    dst.write(np.where(np.isnan(risk), -9999.0, risk).astype("float32"), 1)
print(np.nanmin(risk), np.nanmax(risk), np.isnan(risk).sum())
# %%
fig, ax = plt.subplots(figsize=(9, 8))
im = ax.imshow(risk, cmap="RdYlGn_r", extent=(transform.c, transform.c + 30 * dem.shape[1], transform.f - 30 * dem.shape[0], transform.f))
fig.colorbar(im, ax=ax, shrink=0.7, label="landslide risk (1 low – 5 high)")
ax.set_title("Landslide risk after the 2017 wildfire (30 % burn severity, 55 % slope, 15 % land cover)")
ax.set_axis_off()
fig.savefig("pred_results/landslide_map.png", dpi=100, bbox_inches="tight")
