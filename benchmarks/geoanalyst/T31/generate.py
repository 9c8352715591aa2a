# Origin and destination areas (km) and flows between them: a share of the
# flows joins origin hot spots to destination hot spots, the rest is random.
r = rng()
o_area = organic_polygon(2.0, 2.0, 1.5, r, irregularity=0.2, n=36)
d_area = organic_polygon(8.0, 3.0, 1.6, rng(1), irregularity=0.2, n=36)
pd.DataFrame(np.round(np.array(o_area.exterior.coords[:-1]), 5), columns=["x", "y"]).to_csv("data/o_area.csv", index=False)
pd.DataFrame(np.round(np.array(d_area.exterior.coords[:-1]), 5), columns=["x", "y"]).to_csv("data/d_area.csv", index=False)
n, n_clustered = 450, 180
o_hot = [(1.5, 2.3), (2.6, 1.6), (2.0, 3.0)]; d_hot = [(7.6, 3.4), (8.6, 2.5)]
def near(c, k, rad, poly):
    out = []
    while len(out) < k:
        p = r.normal(c, rad, size=2)
        if poly.contains(Point(p)):
            out.append(p)
    return out
flows = []
for k in range(n_clustered):
    o = near(o_hot[k % 3], 1, 0.15, o_area)[0]; d = near(d_hot[k % 2], 1, 0.15, d_area)[0]
    flows.append((*o, *d))
rand_o = points_in(o_area, n - n_clustered, r); rand_d = points_in(d_area, n - n_clustered, r)
flows += [(a.x, a.y, b.x, b.y) for a, b in zip(rand_o, rand_d)]
df = pd.DataFrame(np.round(np.array(flows), 5), columns=["x_o", "y_o", "x_d", "y_d"]).sample(frac=1.0, random_state=SEED)
df.to_csv("data/flow.csv", index=False)
