import matplotlib.pyplot as plt
from esda.getisord import G_Local
from libpysal.weights import DistanceBand
pts = gpd.read_file("data/High_Blood_Level_Results.shp").to_crs(32610)
zips = gpd.read_file("data/Sacramento_ZIP_Codes.shp").to_crs(32610)
print(len(pts), "cases,", len(zips), "ZIP codes")
# %% hexagon tessellation
size = 577.0  # circumradius: ~1 km across flats
minx, miny, maxx, maxy = zips.total_bounds
w, h = np.sqrt(3) * size, 1.5 * size
hexes = []
for j, y in enumerate(np.arange(miny - h, maxy + h, h)):
    for x in np.arange(minx - w, maxx + w, w) + (w / 2 if j % 2 else 0):
        hexes.append(shapely.Polygon([(x + size * np.cos(a), y + size * np.sin(a)) for a in np.radians(np.arange(30, 390, 60))]))
grid = gpd.GeoDataFrame(geometry=hexes, crs=32610)
grid = grid[grid.intersects(zips.union_all())].reset_index(drop=True)
counts = gpd.sjoin(pts, grid, predicate="within").groupby("index_right").size()
grid["cases"] = counts.reindex(grid.index, fill_value=0).astype(int)
print(len(grid), "hexagons;", grid.cases.sum(), "cases counted")
# %% Gi*
wts = DistanceBand.from_dataframe(grid, threshold=1.8 * size, silence_warnings=True)
wts.transform = "B"
g = G_Local(grid.cases.astype(float).values, wts, star=True, transform="B", permutations=199, seed=0)
grid["gi_z"] = g.Zs
grid["p_value"] = g.p_sim
grid["spot"] = np.where((grid.p_value < 0.05) & (grid.gi_z > 0), "hot", np.where((grid.p_value < 0.05) & (grid.gi_z < 0), "cold", "not significant"))
grid.to_crs(4326).to_file("pred_results/lead_hexagons.geojson", driver="GeoJSON")
print(grid.spot.value_counts())
# %% map
colors = {"hot": "#d7191c", "cold": "#2c7bb6", "not significant": "#f0f0f0"}
fig, ax = plt.subplots(figsize=(9, 9))
for k, sub in grid.groupby("spot"):
    sub.plot(ax=ax, color=colors[k], edgecolor="white", linewidth=0.3, label=k)
zips.boundary.plot(ax=ax, color="black", linewidth=0.6)
ax.set_title("Elevated blood lead levels: Gi* hot spots on 1 km hexagons"); ax.set_axis_off()
import matplotlib.patches as mpatches
ax.legend(handles=[mpatches.Patch(color=c, label=k) for k, c in colors.items()])
fig.savefig("pred_results/lead_hotspots.png", dpi=110, bbox_inches="tight")
