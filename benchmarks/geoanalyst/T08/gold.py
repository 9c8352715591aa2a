import matplotlib.pyplot as plt
import matplotlib.patches as mpatches
hoods = gpd.read_file("data/etobicoke.geojson").to_crs(32617)
stations = gpd.read_file("data/fire_stations.geojson").to_crs(32617)
cover = gpd.GeoDataFrame(geometry=stations.buffer(2500), crs=32617)
gaps = gpd.overlay(hoods, cover, how="difference")
print(round(gaps.area.sum() / hoods.area.sum() * 100, 1), "% of Etobicoke uncovered")
# %% map
fig, ax = plt.subplots(figsize=(9, 9))
hoods.plot(ax=ax, color="lightgrey", edgecolor="black", linewidth=0.4)
cover.plot(ax=ax, color="green", alpha=0.25)
gaps.plot(ax=ax, color="red", alpha=0.6)
stations.plot(ax=ax, color="black", marker="^", markersize=40)
ax.legend(handles=[mpatches.Patch(color="green", alpha=0.25, label="2.5 km coverage"), mpatches.Patch(color="red", alpha=0.6, label="no service")])
ax.set_title("Fire service coverage gaps in Etobicoke")
fig.savefig("pred_results/Fire_Service_Analysis.png", dpi=110, bbox_inches="tight")
