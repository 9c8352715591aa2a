# Berlin-like neighbourhoods (Voronoi cells of a city outline, grouped into
# twelve neighbourhood groups) and Airbnb listings whose prices are higher
# in the centre, in WGS 84.
r = rng()
centre = (13.40, 52.52)
outline = organic_polygon(0.0, 0.0, 20000.0, r, irregularity=0.15)
cells = voronoi_cells(outline, 96, r)
groups = [f"Group {k + 1}" for k in range(12)]
cx = np.array([c.centroid.x for c in cells]); cy = np.array([c.centroid.y for c in cells])
angle = (np.degrees(np.arctan2(cy, cx)) + 180) // 60          # six sectors
ring = (np.hypot(cx, cy) > 9000).astype(int)                   # inner / outer
group_of = [groups[int(a) * 2 + int(k)] for a, k in zip(angle, ring)]
to_ll = lambda g: shapely.affinity.translate(shapely.affinity.scale(g, 1 / 68000.0, 1 / 111000.0, origin=(0, 0)), *centre)
hoods = gpd.GeoDataFrame({"neighbourhood": [f"Kiez {i + 1:02d}" for i in range(len(cells))], "neighbourhood_group": group_of}, geometry=[shapely.geometry.MultiPolygon([to_ll(c)]) for c in cells], crs=4326)
hoods.to_file("data/berlin-neighbourhoods.geojson", driver="GeoJSON")
n = 1500
pts = points_in(outline, n, r)
d = np.array([np.hypot(p.x, p.y) for p in pts])
price = np.round(35 + 70 * np.exp(-(d / 9000.0) ** 2) + r.gamma(2.0, 9.0, n), 0)
ll = [to_ll(p) for p in pts]
listings = pd.DataFrame({
    "id": np.arange(100001, 100001 + n), "scrape_id": 20170507, "city": "Berlin", "state": "Berlin",
    "zipcode": r.integers(10115, 14199, n), "smart_location": "Berlin, Germany", "country_code": "DE", "country": "Germany",
    "latitude": [p.y for p in ll], "longitude": [p.x for p in ll], "price": price,
})
listings.loc[r.choice(n, 20, replace=False), "price"] = np.nan
listings.to_csv("data/berlin-listings.csv", index=False)
