import rasterio
from rasterio.windows import from_bounds
from rasterstats import zonal_stats
import matplotlib.pyplot as plt
fields = gpd.read_file("data/Field_Boundaries.shp")
b_src, a_src = rasterio.open("data/Before_Storm.tif"), rasterio.open("data/After_Storm.tif")
left = max(b_src.bounds.left, a_src.bounds.left); right = min(b_src.bounds.right, a_src.bounds.right)
bottom = max(b_src.bounds.bottom, a_src.bounds.bottom); top = min(b_src.bounds.top, a_src.bounds.top)
def savi(src):
    win = from_bounds(left, bottom, right, top, src.transform).round_offsets().round_lengths()
    red, nir = src.read(3, window=win).astype("float64"), src.read(4, window=win).astype("float64")
    return (nir - red) / (nir + red + 0.5) * 1.5, src.window_transform(win)
savi_before, transform = savi(b_src)
savi_after, _ = savi(a_src)
print(savi_before.shape, savi_after.shape)
# %%
loss = savi_before - savi_after
loss[loss < 0] = np.nan
stats = zonal_stats(fields.to_crs(b_src.crs), loss, affine=transform, nodata=np.nan, stats=["mean"])
fields["mean_loss"] = [s["mean"] for s in stats]
fields[["Field_ID", "mean_loss", "geometry"]].to_file("pred_results/field_veg_loss.geojson", driver="GeoJSON")
print(fields["mean_loss"].describe())
# %%
fig, ax = plt.subplots(figsize=(9, 8))
fields.plot(ax=ax, column="mean_loss", cmap="OrRd", edgecolor="grey", legend=True, missing_kwds={"color": "lightgrey"},
            legend_kwds={"label": "mean SAVI loss", "shrink": 0.7})
ax.set_title("Vegetation loss per field after the hailstorm")
ax.set_axis_off()
fig.savefig("pred_results/field_veg_loss.png", dpi=100, bbox_inches="tight")
