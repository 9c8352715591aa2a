# A street network: a jittered 8 x 8 lattice of intersections (EPSG:32617)
# with some streets missing, written as line segments with a speed limit.
r = rng()
n = 8
pts = {}
for i in range(n):
    for j in range(n):
        pts[(i, j)] = (600000 + j * 250 + r.normal(0, 25), 4800000 + i * 250 + r.normal(0, 25))
rows = []
for i in range(n):
    for j in range(n):
        for di, dj in ((0, 1), (1, 0)):
            a, b = (i, j), (i + di, j + dj)
            if b not in pts or r.random() < 0.12:
                continue
            speed = 50 if (i == 3 or j == 4) else 30
            rows.append({"street_id": len(rows) + 1, "from_node": f"N{i}{j}", "to_node": f"N{b[0]}{b[1]}", "speed_kmh": speed, "geometry": LineString([pts[a], pts[b]])})
gpd.GeoDataFrame(rows, crs=32617).to_file("data/streets.geojson", driver="GeoJSON")
