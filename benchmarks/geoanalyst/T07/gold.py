import matplotlib.pyplot as plt
import rasterio
from rasterstats import zonal_stats
with rasterio.open("data/Elevation_2050.tif") as src:
    elev = src.read(1, masked=True).filled(np.nan); transform = src.transform
buildings = gpd.read_file("data/StudyAreaBuildings.shp")
depth = np.where(elev <= -200, -(elev + 200), np.nan)
print(np.isfinite(depth).mean(), np.nanmax(depth))
# %% damage per building
stats = zonal_stats(buildings, np.nan_to_num(depth, nan=-1), affine=transform, nodata=-1, stats=["mean"], all_touched=True)
buildings["mean_depth"] = [s["mean"] if s["mean"] is not None else 0.0 for s in stats]
buildings["damage"] = np.where(buildings.mean_depth > 1,
    (0.298 * np.log(0.01 * buildings.mean_depth.clip(lower=1e-6)) + 1.4502) * 271 * buildings.geometry.area, 0.0)
flooded = buildings[buildings.mean_depth > 0]
flooded.to_file("pred_results/flooded_buildings.geojson", driver="GeoJSON")
print(len(flooded), "flooded buildings; total damage", round(flooded.damage.sum()))
# %% map
fig, ax = plt.subplots(figsize=(11, 8))
extent = [transform.c, transform.c + transform.a * depth.shape[1], transform.f + transform.e * depth.shape[0], transform.f]
im = ax.imshow(depth, cmap="Blues", extent=extent)
fig.colorbar(im, ax=ax, label="flood depth 2050 (cm)")
buildings.plot(ax=ax, color="lightgrey", edgecolor="grey")
flooded.plot(ax=ax, column="damage", cmap="OrRd", legend=True, legend_kwds={"label": "damage"})
ax.set_title("Flooding in 2050 after subsidence: depth and building damage")
fig.savefig("pred_results/flooding_analysis.png", dpi=110, bbox_inches="tight")
