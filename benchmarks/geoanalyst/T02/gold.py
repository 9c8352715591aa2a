import matplotlib.pyplot as plt
service = gpd.read_file("data/BusServiceArea.geojson").to_crs(32616)
bg = gpd.read_file("data/HamiltonDemographics.geojson").to_crs(32616)
factors = ["households_ACSHHBPOV", "populationToPolygonSizeRating", "AtRisk_ACSOVEH0"]
bg[factors] = bg[factors].fillna(0)
print(bg[factors].describe())
# %% need and coverage
high = pd.DataFrame({f: bg[f] >= bg[f].quantile(2 / 3) for f in factors})
bg["need_count"] = high.sum(axis=1)
served = service.union_all()
outside = gpd.overlay(bg[bg.need_count >= 2], gpd.GeoDataFrame(geometry=[served], crs=32616), how="difference")
outside = outside[outside.geometry.area > 1000]
outside.to_crs(4326).to_file("pred_results/underserved_block_groups.geojson", driver="GeoJSON")
print(len(outside), "high-need block groups (parts) outside service")
# %% map
fig, ax = plt.subplots(figsize=(10, 10))
for col, cmap in zip(factors, ["Reds", "Blues", "Greens"]):
    bg.plot(column=col, cmap=cmap, alpha=0.35, ax=ax, linewidth=0)
bg.boundary.plot(ax=ax, color="grey", linewidth=0.2)
service.plot(ax=ax, facecolor="none", edgecolor="black", linewidth=0.8)
outside.boundary.plot(ax=ax, color="magenta", linewidth=1.5)
ax.set_title("Transit service areas over poverty (red), density (blue) and no-vehicle households (green)")
ax.set_axis_off()
fig.savefig("pred_results/transit_access.png", dpi=110, bbox_inches="tight")
