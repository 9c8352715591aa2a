buildings = gpd.read_file("data/buildings.shp")
with rasterio.open("data/flood_depth.tif") as src:
    depth = src.read(1)
    transform = src.transform
# %%
from rasterstats import zonal_stats
stats = zonal_stats(buildings, depth, affine=transform, stats=["max"], nodata=-1)
buildings["max_depth"] = [s["max"] if s["max"] is not None else 0.0 for s in stats]
# %%
buildings["exposure"] = np.where(buildings["max_depth"] == 0, "none", np.where(buildings["max_depth"] <= 0.5, "low", "high"))
exposure_counts = {k: int(v) for k, v in buildings["exposure"].value_counts().items()}
# %%
factor = np.where(buildings["use"] == "residential", 0.3, 0.2)
buildings["damage"] = np.minimum(1, factor * buildings["max_depth"]) * buildings["value_usd"]
total_damage = buildings["damage"].sum()
# %%
top_buildings = buildings.sort_values("damage", ascending=False)["bldg_id"].head(5).tolist()
# %%
flooded_ha = (depth > 0).sum() * 25 / 10000
# %%
mean_depth_flooded = round(float(depth[depth > 0].mean()), 3)
# %%
damage_by_use = {k: round(float(v), 2) for k, v in buildings.groupby("use")["damage"].sum().items()}
# %%
n_damaged = int((buildings["damage"] > 0).sum())
# %%
high_mean_value = round(float(buildings.loc[buildings["exposure"] == "high", "value_usd"].mean()), 2)
