import matplotlib.pyplot as plt
import rasterio
from rasterio.features import shapes
from shapely.geometry import shape
def nbr(path):
    with rasterio.open(path) as src:
        nir, swir = src.read(5).astype(float), src.read(7).astype(float)
        return (nir - swir) / (nir + swir), src.transform, src.crs
nbr14, transform, crs = nbr("data/G_2014.tif")
nbr15, _, _ = nbr("data/G_2015.tif")
dnbr = nbr14 - nbr15
print(np.nanpercentile(dnbr, [1, 50, 99]))
# %% burned polygons
burned = (dnbr > 0.2).astype("uint8")
polys = [shape(g) for g, v in shapes(burned, mask=burned == 1, transform=transform) if v == 1]
scars = gpd.GeoDataFrame({"area_ha": [p.area / 1e4 for p in polys]}, geometry=polys, crs=crs)
scars = scars[scars.area_ha > 0.5]
scars.to_file("pred_results/burn_scars.geojson", driver="GeoJSON")
print(len(scars), "scar polygons,", round(scars.area_ha.sum(), 1), "ha")
# %% map
fig, ax = plt.subplots(figsize=(9, 8))
extent = [transform.c, transform.c + transform.a * dnbr.shape[1], transform.f + transform.e * dnbr.shape[0], transform.f]
im = ax.imshow(dnbr, cmap="RdYlGn_r", vmin=-0.3, vmax=0.8, extent=extent)
scars.boundary.plot(ax=ax, color="black", linewidth=1)
fig.colorbar(im, ax=ax, label="dNBR (2014 − 2015)")
ax.set_title("Burn scars (dNBR > 0.2)")
fig.savefig("pred_results/burn_scar_analysis.png", dpi=110, bbox_inches="tight")
