import matplotlib.pyplot as plt
hoods = gpd.read_file("data/etobicoke.geojson").to_crs(32617)
stations = gpd.read_file("data/fire_stations.geojson").to_crs(32617)
buffers = gpd.GeoDataFrame(stations[["NAME"]], geometry=stations.buffer(2500), crs=32617)
buffers.to_file("pred_results/fire_buffer.geojson", driver="GeoJSON")
gaps = gpd.overlay(hoods, buffers[["geometry"]], how="difference")
gaps["uncovered_km2"] = (gaps.area / 1e6).round(3)
gaps.to_file("pred_results/no_service.geojson", driver="GeoJSON")
# %% most compromised neighbourhoods
share = gaps.set_index("LCODE_NAME").area / hoods.set_index("LCODE_NAME").area
hoods["uncovered_share"] = hoods.LCODE_NAME.map(share).fillna(0)
fig, ax = plt.subplots(figsize=(9, 9))
hoods.plot(ax=ax, column="uncovered_share", cmap="Reds", legend=True, edgecolor="black", linewidth=0.3)
stations.plot(ax=ax, color="blue", marker="^", markersize=40)
ax.set_title("Share of each neighbourhood outside 2.5 km of a fire station")
fig.savefig("pred_results/no_service_map.png", dpi=110, bbox_inches="tight")
print(hoods.nlargest(5, "uncovered_share")[["LCODE_NAME", "uncovered_share"]])
