import matplotlib.pyplot as plt
trees = gpd.read_file("data/street_trees_sample.geojson").to_crs(3310)
city = gpd.read_file("data/sfo_boroughs.geojson").to_crs(3310)
xy = np.c_[trees.geometry.x, trees.geometry.y]
known = trees["Species"].notnull().to_numpy()
minx, miny, maxx, maxy = city.total_bounds
side = max(maxx - minx, maxy - miny)
cells = []
def split(x0, y0, size, idx):
    if len(idx) > 25:
        half = size / 2
        for dx in (0, half):
            for dy in (0, half):
                inside = idx[(xy[idx, 0] >= x0 + dx) & (xy[idx, 0] < x0 + dx + half) & (xy[idx, 1] >= y0 + dy) & (xy[idx, 1] < y0 + dy + half)]
                split(x0 + dx, y0 + dy, half, inside)
    elif len(idx) > 0:
        cells.append((shapely.box(x0, y0, x0 + size, y0 + size), len(idx), known[idx].mean()))
split(minx, miny, side * 1.0001, np.arange(len(xy)))
quad = gpd.GeoDataFrame(cells, columns=["geometry", "trees", "species_share"], geometry="geometry", crs=3310)
quad = gpd.clip(quad, city)
quad.to_crs(4326).to_file("pred_results/trees_quadtree.geojson", driver="GeoJSON")
print(len(quad), quad["species_share"].describe())
# %%
fig, ax = plt.subplots(figsize=(9, 9))
quad.plot(ax=ax, column="species_share", cmap="Greens", edgecolor="white", linewidth=0.6, legend=True,
          legend_kwds={"label": "share of trees with a recorded species", "shrink": 0.6})
city.boundary.plot(ax=ax, color="grey", linewidth=1)
ax.set_title("Street-tree species completeness (quadtree cells of ≤ 25 trees)")
ax.set_axis_off()
fig.savefig("pred_results/trees_count_vis.png", dpi=100, bbox_inches="tight")
