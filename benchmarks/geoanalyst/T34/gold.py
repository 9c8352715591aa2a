import matplotlib.pyplot as plt
towns = gpd.read_file("data/ShikokuMetropolitan.geojson").to_crs(6690)
pop = gpd.read_file("data/ShikokuPopulation.geojson").to_crs(6690)
roads = gpd.read_file("data/AllSeasonRoads.geojson").to_crs(6690)
rural = towns[towns["AREATYPE"] == "RURAL"][["AREANAME", "geometry"]]
pop["cell_area"] = pop.area
pieces = gpd.overlay(pop[["D0001", "cell_area", "geometry"]], rural, how="intersection")
pieces["population"] = pieces["D0001"] * pieces.area / pieces["cell_area"]
print(len(rural), "rural towns;", round(pieces["population"].sum()), "rural people")
# %%
buffer = gpd.GeoDataFrame(geometry=[roads.buffer(2000).union_all()], crs=6690)
near = gpd.overlay(pieces, buffer, how="intersection")
near["population_2km"] = near["D0001"] * near.area / near["cell_area"]
table = pieces.groupby("AREANAME")["population"].sum().to_frame().join(near.groupby("AREANAME")["population_2km"].sum()).fillna(0)
table["pct_2km"] = 100 * table["population_2km"] / table["population"]
table.reset_index().to_csv("pred_results/rural_road_access.csv", index=False)
print("overall:", round(100 * table["population_2km"].sum() / table["population"].sum(), 1), "%")
# %%
mapped = rural.merge(table.reset_index(), on="AREANAME")
fig, ax = plt.subplots(figsize=(12, 7))
towns.plot(ax=ax, color="lightgrey", edgecolor="white")
mapped.plot(ax=ax, column="pct_2km", cmap="Greens", edgecolor="white", legend=True,
            legend_kwds={"label": "% of rural population within 2 km of an all-season road", "shrink": 0.6})
roads.plot(ax=ax, color="black", linewidth=1)
ax.set_title("Rural access to all-season roads, Shikoku (urban towns grey)")
ax.set_axis_off()
fig.savefig("pred_results/accessibility.png", dpi=100, bbox_inches="tight")
