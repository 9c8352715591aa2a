import matplotlib.pyplot as plt
import networkx as nx
import rasterio
from shapely.geometry import LineString
from rasterio.features import rasterize
from scipy.ndimage import distance_transform_edt, maximum_filter, minimum_filter
from scipy.sparse import coo_matrix
from scipy.sparse.csgraph import dijkstra
def read(name):
    with rasterio.open(f"data/{name}") as src:
        return src.read(1), src.transform, src.crs
elev, transform, crs = read("Elevation.tif"); lc, _, _ = read("landCover.tif"); prot, _, _ = read("Protected_Status.tif")
roads = gpd.read_file("data/Roads.geojson"); habitat = gpd.read_file("data/habitat.geojson")
# %% cost surface
rug = maximum_filter(elev, 3) - minimum_filter(elev, 3)
dist = distance_transform_edt(rasterize(roads.geometry, out_shape=elev.shape, transform=transform) == 0) * 30
def rescale(a, high_is_costly=True):
    s = 1 + 9 * (a - a.min()) / (a.max() - a.min())
    return s if high_is_costly else 11 - s
lut_lc = np.full(256, 10.0); lut_pr = np.full(256, 10.0)
for k, v in {11: 10, 21: 8, 22: 7, 23: 8, 24: 9, 31: 6, 41: 2, 42: 1, 43: 2, 52: 3, 71: 3, 72: 3, 81: 4, 82: 6, 90: 4, 95: 4}.items():
    lut_lc[k] = v
for k, v in {0: 1, 1: 3, 2: 6, 3: 9, 4: 10}.items():
    lut_pr[k] = v
cost = 1.0 * rescale(dist, False) + 1.25 * rescale(rug) + 1.0 * lut_pr[prot] + 1.25 * lut_lc[lc]
print(cost.shape, cost.min(), cost.max())
# %% grid graph and least-cost paths
h, w = cost.shape
idx = np.arange(h * w).reshape(h, w)
src_l, dst_l, wt_l = [], [], []
for dr, dc in [(0, 1), (1, 0), (1, 1), (1, -1)]:
    # a: cells that have a neighbour at (dr, dc); b: those neighbours
    a = idx[0:h - dr, max(0, -dc):w - max(0, dc)]
    b = idx[dr:h, max(0, dc):w + min(0, dc) if dc else w]
    step = np.hypot(dr, dc)
    src_l.append(a.ravel()); dst_l.append(b.ravel()); wt_l.append((cost.ravel()[a.ravel()] + cost.ravel()[b.ravel()]) / 2 * step)
n = h * w
g = coo_matrix((np.concatenate(wt_l), (np.concatenate(src_l), np.concatenate(dst_l))), shape=(n, n)).tocsr()
centres = [rasterio.transform.rowcol(transform, p.x, p.y) for p in habitat.geometry.centroid]
nodes = [idx[r_, c_] for r_, c_ in centres]
d, pred = dijkstra(g, directed=False, indices=nodes, return_predecessors=True)
# %% minimum spanning tree of the habitat network, corridor lines
G = nx.Graph()
for i in range(len(nodes)):
    for j in range(i + 1, len(nodes)):
        G.add_edge(i, j, weight=d[i, nodes[j]])
lines, costs, pairs = [], [], []
for i, j in nx.minimum_spanning_tree(G).edges():
    path, k = [], nodes[j]
    while k != nodes[i] and k >= 0:
        path.append(k); k = pred[i, k]
    path.append(nodes[i])
    rr, cc = np.unravel_index(np.array(path), (h, w))
    xs, ys = rasterio.transform.xy(transform, rr, cc)
    lines.append(LineString(zip(xs, ys))); costs.append(float(d[i, nodes[j]]))
    pairs.append(f"{habitat.name[i]} - {habitat.name[j]}")
corr = gpd.GeoDataFrame({"connection": pairs, "acc_cost": costs}, geometry=lines, crs=crs)
corr.to_file("pred_results/corridors.geojson", driver="GeoJSON")
print(corr[["connection", "acc_cost"]])
# %% map
fig, ax = plt.subplots(figsize=(10, 8))
extent = [transform.c, transform.c + transform.a * w, transform.f + transform.e * h, transform.f]
im = ax.imshow(cost, cmap="viridis", extent=extent); fig.colorbar(im, ax=ax, label="cost")
habitat.plot(ax=ax, color="none", edgecolor="white", linewidth=2)
corr.plot(ax=ax, color="red", linewidth=2)
roads.plot(ax=ax, color="black", linewidth=1)
ax.set_title("Least-cost corridors between mountain lion habitats")
fig.savefig("pred_results/optimal_path.png", dpi=110, bbox_inches="tight")
