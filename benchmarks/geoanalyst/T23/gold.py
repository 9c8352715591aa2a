import rasterio
from rasterstats import zonal_stats
import matplotlib.pyplot as plt
parcels = gpd.read_file("data/GeorgetownCo_Parcels.shp")
attrib = pd.read_csv("data/PADUS_CRS_attrib.csv")
with rasterio.open("data/PADUS_CRS_final.tif") as src:
    cell_area = abs(src.transform.a * src.transform.e); crs = src.crs
parcels = parcels.to_crs(crs)
stats = zonal_stats(parcels, "data/PADUS_CRS_final.tif", categorical=True, nodata=0)
print(sum(1 for s in stats if s), "parcels touch eligible open space")
# %%
eligible = [sum(s.values()) for s in stats]
majority = [max(s, key=s.get) if s else None for s in stats]
parcels["OBJECTID"] = majority
parcels["OSP_ACRES"] = np.array(eligible) * cell_area * 0.85 * 0.000247105
osp = parcels[parcels["OSP_ACRES"] >= 1].copy()
osp["OBJECTID"] = osp["OBJECTID"].astype(int)
table = osp.merge(attrib, on="OBJECTID", how="left")[["PARCEL_ID", "OBJECTID", "Category", "Own_Type", "Unit_Nm", "OSP_ACRES"]]
table = table.sort_values("OSP_ACRES", ascending=False)
table.to_csv("pred_results/osp_parcels.csv", index=False)
print(len(table), "parcels,", round(table["OSP_ACRES"].sum(), 1), "OSP acres")
# %%
fig, ax = plt.subplots(figsize=(9, 9))
parcels.plot(ax=ax, color="whitesmoke", edgecolor="lightgrey", linewidth=0.3)
osp.plot(ax=ax, column="OSP_ACRES", cmap="YlGn", legend=True, edgecolor="grey", linewidth=0.3,
         legend_kwds={"label": "OSP acres (85 % of eligible area)", "shrink": 0.6})
ax.set_title("Open space preservation credit per parcel")
ax.set_axis_off()
fig.savefig("pred_results/osp_parcels.png", dpi=100, bbox_inches="tight")
