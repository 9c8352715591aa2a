# Sacramento: children with elevated blood lead levels (points, WGS 84) and ZIP codes (Web Mercator).
def make_lead_data():
    r = rng()
    cx, cy = 632_000.0, 4_270_000.0  # UTM 10N
    area = organic_polygon(cx, cy, 16_000, r, 0.15)
    zips = gpd.GeoDataFrame(geometry=voronoi_cells(area, 28, r), crs=32610)
    zips["ZIP_CODE"] = [str(95800 + i) for i in range(len(zips))]
    zips["PO_NAME"] = "SACRAMENTO"; zips["STATE"] = "CA"
    zips["POP2021"] = r.integers(8000, 60000, len(zips))
    zips["SQMI"] = (zips.geometry.area / 2_589_988).round(2)
    zips.to_crs(3857).to_file("data/Sacramento_ZIP_Codes.shp")
    hot = [(cx - 4000, cy + 2500), (cx + 5000, cy - 3000)]
    n = 420
    k = r.choice(3, n, p=[0.35, 0.3, 0.35])
    xs = np.where(k == 0, r.normal(hot[0][0], 1500, n), np.where(k == 1, r.normal(hot[1][0], 1800, n), r.uniform(cx - 14000, cx + 14000, n)))
    ys = np.where(k == 0, r.normal(hot[0][1], 1500, n), np.where(k == 1, r.normal(hot[1][1], 1800, n), r.uniform(cy - 14000, cy + 14000, n)))
    inside = shapely.contains_xy(area, xs, ys)
    xs, ys = xs[inside], ys[inside]
    # several children per address: duplicate some coordinates exactly
    dup = r.choice(len(xs), len(xs) // 6)
    xs = np.r_[xs, xs[dup]]; ys = np.r_[ys, ys[dup]]
    m = len(xs)
    streets = ["J St", "Broadway", "Folsom Blvd", "Stockton Blvd", "Del Paso Blvd", "Freeport Blvd", "Florin Rd"]
    pts = gpd.GeoDataFrame({
        "House": r.integers(100, 9999, m).astype(str), "Street": r.choice(streets, m), "Unit": "",
        "City": "Sacramento", "ZIP": "958" + pd.Series(r.integers(10, 40, m)).astype(str),
        "FirstName": r.choice(["Ana", "Ben", "Cruz", "Dee", "Eli", "Fay", "Gus", "Hana"], m),
        "LastName": r.choice(["Lee", "Diaz", "Nguyen", "Smith", "Khan", "Ortiz"], m),
        "Bday": pd.Series(pd.to_datetime("2012-01-01") + pd.to_timedelta(r.integers(0, 3000, m), unit="D")).dt.strftime("%Y-%m-%d"),
        "State": "CA", "BloodLevel": np.round(4.5 + r.gamma(2.0, 2.0, m), 1), "TestYear": r.integers(2015, 2023, m),
        "Race": r.choice(["A", "B", "H", "W", "O"], m), "Gender": r.choice(["F", "M"], m), "Age": r.integers(1, 7, m)},
        geometry=gpd.points_from_xy(xs, ys), crs=32610).to_crs(4326)
    pts.to_file("data/High_Blood_Level_Results.shp")
