import json
with rasterio.open("data/landuse.tif") as src:
    lu = src.read(1)
    transform = src.transform
    crs = src.crs
with open("data/legend.json") as f:
    legend = json.load(f)
# %%
class_ha = {name: round(float((lu == int(code)).sum() * 625 / 10000), 4) for code, name in legend.items()}
# %%
from rasterio.features import shapes
from shapely.geometry import shape
recs = [(int(v), shape(g)) for g, v in shapes(lu, mask=lu > 0, transform=transform, connectivity=4)]
patches = gpd.GeoDataFrame({"code": [c for c, _ in recs], "name": [legend[str(c)] for c, _ in recs]}, geometry=[g for _, g in recs], crs=crs)
# %%
largest_forest_ha = patches.loc[patches["name"] == "forest"].area.max() / 10000
n_water = int((patches["name"] == "water").sum())
# %%
os.makedirs("pred_results", exist_ok=True)
landuse_polys = patches.dissolve(by="name").reset_index()[["name", "geometry"]]
landuse_polys.to_file("pred_results/landuse.gpkg", layer="landuse", driver="GPKG")
# %%
n_patches = len(patches)
mean_patch_ha = round(float(patches.area.mean() / 10000), 4)
# %%
saved_names = sorted(gpd.read_file("pred_results/landuse.gpkg", layer="landuse")["name"])
# %%
mean_water_patch_ha = round(float(patches.loc[patches["name"] == "water"].area.mean() / 10000), 4)
# %%
urban_patches = int((patches["name"] == "urban").sum())
