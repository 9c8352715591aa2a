# A Brevard County-like road network (NAD83 / Florida East, US feet) and six
# years of crashes with day of week and hour: peak-hour crashes concentrate
# on two busy corridors, others are spread over the network and the day.
r = rng()
x0, y0, step = 760_000.0, 1_400_000.0, 1_600.0
nx_, ny_ = 16, 28
pt = lambda i, j: (x0 + i * step, y0 + j * step)
segs = []
for i in range(nx_ + 1):
    for j in range(ny_ + 1):
        if i < nx_:
            segs.append((LineString([pt(i, j), pt(i + 1, j)]), f"{['Malabar', 'Palm Bay', 'Eau Gallie', 'Pineda', 'Wickham', 'Sarno', 'Post', 'Viera'][j % 8]} Rd", "Local" if j % 5 else "Arterial"))
        if j < ny_:
            segs.append((LineString([pt(i, j), pt(i, j + 1)]), "US 1" if i == 12 else "Babcock St" if i == 5 else f"{i}th St", "Arterial" if i in (5, 12) else "Local"))
roads = gpd.GeoDataFrame({"ROAD_NAME": [s[1] for s in segs], "FUNC_CLASS": [s[2] for s in segs],
                          "AADT": [int(r.integers(18_000, 40_000)) if s[2] == "Arterial" else int(r.integers(800, 6_000)) for s in segs]},
                         geometry=[s[0] for s in segs], crs=2236)
roads.insert(0, "ROAD_ID", np.arange(1, len(roads) + 1))
roads.to_file("data/roads.shp")
days = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"]
n = 9_000
weights = roads["AADT"].to_numpy(dtype=float); weights /= weights.sum()
seg = r.choice(len(roads), n, p=weights)
hod = r.choice(24, n, p=np.r_[np.full(6, 0.01), np.full(9, 0.04), np.full(3, 0.07), np.full(6, 0.0383333)] / np.r_[np.full(6, 0.01), np.full(9, 0.04), np.full(3, 0.07), np.full(6, 0.0383333)].sum())
dow = r.choice(days, n)
hot = np.array([Point(pt(12, 18)), Point(pt(5, 8))])
mid = np.array([roads.geometry[k].interpolate(0.5, normalized=True) for k in range(len(roads))])
peak_seg = [k for k in range(len(roads)) if min(mid[k].distance(h) for h in hot) < 5_000]
extra = 1_500
seg = np.r_[seg, r.choice(peak_seg, extra)]
hod = np.r_[hod, r.integers(15, 18, extra)]
dow = np.r_[dow, r.choice(days[:5], extra)]
pts = []
for k in seg:
    p = roads.geometry[k].interpolate(r.uniform(0, 1), normalized=True)
    pts.append(Point(p.x + r.normal(0, 60), p.y + r.normal(0, 60)))
far = r.choice(len(pts), 40, replace=False)
for k in far:
    pts[k] = Point(x0 + nx_ * step + r.uniform(1_500, 4_000), pts[k].y)   # beachside parking lots, off the network
years = r.integers(2010, 2016, len(pts))
crashes = gpd.GeoDataFrame({"CRASH_NO": np.arange(100_000, 100_000 + len(pts)), "CRASH_YEAR": years, "CRASH_DOW": dow, "CRASH_HOD": hod,
                            "SEVERITY": r.choice(["PDO", "Injury", "Fatal"], len(pts), p=[0.7, 0.29, 0.01])}, geometry=pts, crs=2236)
crashes.to_file("data/crashes.shp")
