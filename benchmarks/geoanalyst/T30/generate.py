# Seattle-like street grid (EPSG:2926, US feet): block-edge segments with
# segment type, arterial class, names, lengths and slopes; nine named
# neighbourhoods; a zoning grid with the Downtown Office Core; park trails.
r = rng()
B, N = 600.0, 30
x0, y0 = 1_262_000.0, 220_000.0
elev_f = smooth_field((N + 1, N + 1), r, 4) * 350.0          # feet, at the intersections
def ordinal(k):
    return f"{k}{'th' if 10 <= k % 100 <= 20 else {1: 'st', 2: 'nd', 3: 'rd'}.get(k % 10, 'th')}"
ew_names = ["S Jackson St", "S Main St", "Yesler Way", "E Fir St", "E Spruce St", "E Alder St", "E Jefferson St", "E James St",
            "E Cherry St", "E Columbia St", "E Marion St", "E Madison St", "E Spring St", "E Seneca St", "E University St",
            "E Union St", "E Pike St", "E Pine St", "E Olive St", "E Howell St", "E Denny Way", "E John St", "E Thomas St",
            "E Harrison St", "E Republican St", "E Mercer St", "E Roy St", "E Aloha St", "E Prospect St", "E Galer St", "E Highland Dr"]
recs = []
def add(p, q, name, ty, art, i0, j0, i1, j1):
    length = float(np.hypot(q[0] - p[0], q[1] - p[1]))
    slope = abs(elev_f[j1, i1] - elev_f[j0, i0]) / length * 100
    recs.append({"SEGMENT_TY": ty, "ARTERIAL_C": art, "ORD_STNAME": name, "GIS_SEG_LE": round(length, 2),
                 "SPEEDLIMIT": 30 if art == 1 else 25 if art == 2 else 20, "SLOPE_PCT": round(float(slope), 2),
                 "geometry": LineString([p, q])})
for i in range(N + 1):
    for j in range(N + 1):
        x, y = x0 + i * B, y0 + j * B
        art = 1 if i % 4 == 2 else 2 if i % 4 == 0 else 0
        if j < N:
            add((x, y), (x, y + B), f"{ordinal(i + 1)} Ave E", 1, art, i, j, i, j + 1)
        art = 1 if j % 4 == 1 else 2 if j % 4 == 3 else 0
        if i < N:
            add((x, y), (x + B, y), ew_names[j], 1, art, i, j, i + 1, j)
hoods = {"DOWNTOWN": (4, 5), "FIRST HILL": (12, 6), "CENTRAL AREA": (24, 7), "BEACON HILL": (10, -3),
         "CAPITOL HILL": (15, 20), "LAKE UNION": (5, 18), "QUEEN ANNE": (4, 28), "MONTLAKE": (25, 24), "MADISON PARK": (27, 15)}
extent = shapely.box(x0, y0, x0 + N * B, y0 + N * B)
seeds = shapely.MultiPoint([(x0 + a * B, y0 + b * B) for a, b in hoods.values()])
cells = shapely.voronoi_polygons(seeds, extend_to=extent.buffer(5000))
polys = {}
for name, (a, b) in hoods.items():
    pt = Point(x0 + a * B, y0 + b * B)
    cell = next(c for c in cells.geoms if c.contains(pt))
    polys[name] = cell.intersection(extent)
gpd.GeoDataFrame({"L_HOOD": list(polys), "S_HOOD": [n.title() for n in polys], "NEIGHBOR_N": np.arange(1, len(polys) + 1)},
                 geometry=list(polys.values()), crs=2926).to_file("data/Neighborhoods.shp")
core = Point(x0 + 4.5 * B, y0 + 5.5 * B)
zones = []
for zi in range(15):
    for zj in range(15):
        z = shapely.box(x0 + 2 * zi * B, y0 + 2 * zj * B, x0 + 2 * (zi + 1) * B, y0 + 2 * (zj + 1) * B)
        d = z.centroid.distance(core)
        u = r.uniform()
        label = ("Downtown Office Core 1" if d < 1000 else "Downtown Office Core 2" if d < 2000 else
                 "Downtown Mixed Commercial" if d < 3500 else "Neighborhood Commercial 3" if u < 0.15 else
                 "Lowrise 3" if u < 0.45 else "Midrise" if u < 0.55 else "Single Family 5000")
        zones.append({"ZONELUT_DE": label, "ZONING": "".join(w[0] for w in label.split()[:3]).upper(), "geometry": z})
gpd.GeoDataFrame(zones, crs=2926).to_file("data/Zoning.shp")
ch = polys["CAPITOL HILL"]
for k in range(4):
    a = ch.representative_point()
    p0 = (a.x + r.uniform(-2500, 2500), a.y + r.uniform(-2500, 2500))
    p1 = (p0[0] + r.uniform(-2000, 2000), p0[1] + r.uniform(-2000, 2000))
    line = wiggly_line(p0, p1, rng(k + 10), 10, 0.1)
    recs.append({"SEGMENT_TY": 8, "ARTERIAL_C": 0, "ORD_STNAME": f"Park Trail {k + 1}", "GIS_SEG_LE": round(line.length, 2),
                 "SPEEDLIMIT": 0, "SLOPE_PCT": 3.0, "geometry": line})
streets = gpd.GeoDataFrame(recs, crs=2926)
streets.insert(0, "COMPKEY", np.arange(10_001, 10_001 + len(streets)))
streets.to_file("data/Streets.shp")
