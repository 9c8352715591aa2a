r = rng()
centres = {"Manhattan": (585_000, 4_515_000, 4_000), "Bronx": (593_000, 4_524_000, 5_000), "Brooklyn": (588_000, 4_500_000, 7_000),
           "Queens": (600_000, 4_507_000, 8_000), "Staten Island": (572_000, 4_494_000, 6_000)}
boros, polys = [], []
for i, (name, (x, y, rad)) in enumerate(centres.items()):
    polys.append(shapely.MultiPolygon([organic_polygon(x, y, rad, rng(i + 1), 0.25)])); boros.append((i + 1, name))
b = gpd.GeoDataFrame({"BoroCode": [c for c, _ in boros], "BoroName": [n for _, n in boros]}, geometry=polys, crs=32618)
b["geometry"] = [p.difference(shapely.union_all([q for q in polys[:k]])) if k else p for k, p in enumerate(polys)]
b["Shape_Leng"] = b.geometry.length.round(2); b["Shape_Area"] = b.geometry.area.round(2)
b.to_crs(4326).to_file("data/nyc_boroughs.geojson", driver="GeoJSON")
weights = np.array([0.22, 0.17, 0.3, 0.24, 0.07])
rows, pts = [], []
for k, (code, name) in enumerate(boros):
    n = int(240 * weights[k])
    for p in points_in(b.geometry.iloc[k], n, rng(10 + k)):
        rows.append({"id": len(rows) + 1, "NUMBER OF PERSONS KILLED": int(r.choice([1, 1, 1, 1, 2, 3])), "BOROUGH": name.upper()}); pts.append(p)
gpd.GeoDataFrame(rows, geometry=pts, crs=32618).to_crs(4326).to_file("data/fatal_collisions.geojson", driver="GeoJSON")
