import rasterio
from rasterstats import zonal_stats
parcels = gpd.read_file("data/parcels.shp")
with rasterio.open("data/impervious.tif") as src:
    cell = abs(src.transform.a * src.transform.e); crs = src.crs
stats = zonal_stats(parcels.to_crs(crs), "data/impervious.tif", categorical=True, nodata=255)
table = pd.DataFrame([{f"VALUE_{k}": v * cell for k, v in s.items()} for s in stats]).fillna(0)
table["Parcel_ID"] = parcels["Parcel_ID"]
print(table.head())
# %%
joined = parcels.merge(table, on="Parcel_ID", how="left")
for c in ("VALUE_0", "VALUE_1"):
    joined[c] = joined[c].fillna(0) if c in joined else 0.0
joined["PCT_IMPERV"] = joined["VALUE_1"] / (joined["VALUE_0"] + joined["VALUE_1"]) * 100
joined.to_file("pred_results/parcels_joint.shp")
print(joined["PCT_IMPERV"].describe())
