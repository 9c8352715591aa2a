# State-like polygons (Voronoi cells around approximate state centres,
# WGS 84) and a 2013 homelessness table as .xlsx with made-up values; North
# Dakota's homeless count jumps with the oil boom.
r = rng()
centres = {"WA": (-120.5, 47.4), "OR": (-120.6, 43.9), "CA": (-119.6, 37.2), "NV": (-116.6, 39.3), "ID": (-114.6, 44.4),
           "MT": (-109.6, 47.0), "WY": (-107.5, 43.0), "UT": (-111.7, 39.3), "AZ": (-111.7, 34.3), "CO": (-105.5, 39.0),
           "NM": (-106.1, 34.4), "ND": (-100.5, 47.5), "SD": (-100.2, 44.4), "NE": (-99.8, 41.5), "KS": (-98.4, 38.5),
           "OK": (-97.5, 35.6), "TX": (-99.3, 31.5), "MN": (-94.3, 46.3), "IA": (-93.5, 42.1), "MO": (-92.5, 38.4),
           "AR": (-92.4, 34.9), "LA": (-92.0, 31.0), "WI": (-89.8, 44.6), "IL": (-89.2, 40.0), "MI": (-85.0, 43.8),
           "IN": (-86.3, 39.9), "OH": (-82.8, 40.3), "KY": (-85.3, 37.5), "TN": (-86.3, 35.9), "MS": (-89.7, 32.7),
           "AL": (-86.8, 32.8), "GA": (-83.4, 32.7), "FL": (-81.7, 28.6), "SC": (-80.9, 33.9), "NC": (-79.4, 35.5),
           "VA": (-78.8, 37.5), "WV": (-80.6, 38.6), "MD": (-76.8, 39.0), "DE": (-75.5, 39.0), "DC": (-77.03, 38.9),
           "PA": (-77.8, 40.9), "NJ": (-74.6, 40.2), "NY": (-75.5, 42.9), "CT": (-72.7, 41.6), "RI": (-71.5, 41.7),
           "MA": (-71.9, 42.3), "VT": (-72.7, 44.0), "NH": (-71.6, 43.7), "ME": (-69.2, 45.4)}
outline = Polygon([(-124.7, 48.4), (-95.2, 49.0), (-89.5, 48.0), (-82.5, 45.5), (-82.5, 42.0), (-79.0, 43.3), (-75.0, 45.0),
                   (-71.5, 45.0), (-69.2, 47.4), (-67.0, 44.8), (-70.0, 41.6), (-74.0, 40.5), (-75.5, 38.5), (-76.0, 35.2),
                   (-81.0, 31.5), (-80.0, 25.3), (-82.8, 29.0), (-85.0, 29.7), (-89.5, 30.2), (-94.0, 29.5), (-97.4, 26.0),
                   (-99.5, 27.5), (-104.5, 29.5), (-106.5, 31.8), (-111.0, 31.3), (-114.8, 32.5), (-117.1, 32.5), (-120.6, 34.6),
                   (-124.2, 40.3)])
cells = shapely.voronoi_polygons(shapely.MultiPoint(list(centres.values())), extend_to=outline.buffer(10))
abbr, geoms = [], []
for a, (x, y) in centres.items():
    cell = next(c for c in cells.geoms if c.contains(Point(x, y)))
    abbr.append(a); geoms.append(cell.intersection(outline))
names = {"ND": "North Dakota", "SD": "South Dakota", "NY": "New York", "CA": "California", "TX": "Texas", "FL": "Florida", "DC": "District of Columbia"}
gpd.GeoDataFrame({"STATE_NAME": [names.get(a, a) for a in abbr], "STATE_FIPS": [f"{k + 1:02d}" for k in range(len(abbr))],
                  "STATE_ABBR": abbr}, geometry=geoms, crs=4326).to_file("data/USA_States.shp")
table_abbr = abbr + ["AK", "HI"]
pop = np.round(np.exp(r.normal(15.2, 0.9, len(table_abbr)))).astype(int)
pop[table_abbr.index("CA")] = 38_300_000; pop[table_abbr.index("TX")] = 26_400_000; pop[table_abbr.index("ND")] = 723_000
rate = np.clip(r.normal(17, 6, len(table_abbr)), 6, 40)
rate[table_abbr.index("DC")] = 110; rate[table_abbr.index("HI")] = 47; rate[table_abbr.index("NY")] = 40
homeless = np.round(pop * rate / 10_000).astype(int)
change = np.round(r.normal(-4, 9, len(table_abbr)), 1)
change[table_abbr.index("ND")] = 226.9
shown = [a if k % 9 else f" {a.lower()} " if k % 2 else f"{a} " for k, a in enumerate(table_abbr)]
save_xlsx(pd.DataFrame({"State": shown, "Change": change, "Pop13": pop, "Homeless13": homeless}), "data/homeless_data.xlsx")
