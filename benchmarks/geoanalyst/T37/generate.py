# A heat vocabulary, a day of tweets (Twitter v1.1 JSON) whose heat talk grows
# towards the south and south-west, and county-like polygons with the Census
# cartographic-boundary columns (NAD83).
import json
r = rng()
outline = Polygon([(-124.5, 48.5), (-95, 49), (-83, 46), (-67, 45), (-70, 41), (-76, 35), (-81, 31), (-80, 25.5),
                   (-83, 29.5), (-90, 29), (-97, 26), (-104, 29.5), (-111, 31.3), (-117, 32.5), (-124, 40)])
counties = voronoi_cells(outline, 300, r)
cent = np.array([[c.centroid.x, c.centroid.y] for c in counties])
state = (np.floor((cent[:, 0] + 125) / 6) * 5 + np.floor((cent[:, 1] - 25) / 6)).astype(int) % 56 + 1
geoid = [f"{s:02d}{k:03d}" for s, k in zip(state, range(1, len(counties) + 1))]
gpd.GeoDataFrame({"STATEFP": [g[:2] for g in geoid], "COUNTYFP": [g[2:] for g in geoid],
                  "COUNTYNS": [f"{1_000_000 + 17 * i:08d}" for i in range(len(counties))],
                  "AFFGEOID": [f"0500000US{g}" for g in geoid], "GEOID": geoid,
                  "NAME": [f"County {i + 1}" for i in range(len(counties))], "LSAD": "06",
                  "ALAND": [int(c.area * 9e9) for c in counties], "AWATER": [int(c.area * 3e8) for c in counties]},
                 geometry=counties, crs=4269).to_file("data/cb_2020_us_county_20m.shp")
heat_terms = ["hot", "heat", "heatwave", "sweltering", "scorching", "humid", "sweaty", "sunburn", "muggy", "boiling",
              "blazing", "roasting", "sizzling", "dehydrated", "sauna", "melting", "tropical", "stifling", "baking", "sultry"]
mild_terms = ["warm", "sunny", "sun", "summer", "weather", "temperature", "forecast", "degrees", "breeze", "clear",
              "cloudy", "rain", "storm", "wind", "cool", "chilly", "fog", "shower", "drizzle", "autumn"]
vocab = {}
for t in heat_terms:
    vocab[t] = round(float(r.uniform(0.6, 1.0)), 2)
for t in mild_terms:
    vocab[t] = round(float(r.uniform(0.05, 0.45)), 2)
stems = ["sun", "heat", "warm", "hot", "sweat", "humid", "dry", "swelter", "burn", "bak", "roast", "boil", "glow", "dust",
         "steam", "blaze", "scorch", "sizzl", "fry", "toast"]
suffixes = ["y", "ier", "iest", "ing", "ed", "s", "ish", "ness", "er", "est", "ly", "like", "fest", "wave", "day", "time", "spell", "zone"]
for s in stems:
    for suf in suffixes:
        term = s + suf
        if term not in vocab and len(vocab) < 400:
            vocab[term] = round(float(r.uniform(0.2, 0.9)), 2)
with open("data/data20000.txt", "w") as f:
    f.write(", ".join(f"'{t}': {v}" for t, v in vocab.items()))
filler = ["today", "my", "the", "so", "is", "and", "lol", "out", "going", "work", "game", "coffee", "friends", "traffic",
          "love", "this", "city", "night", "morning", "dog", "beach", "park", "lunch", "class", "finally", "ugh"]
minx, miny, maxx, maxy = outline.bounds
tweets = []
heat_words = heat_terms + [t for t in vocab if t not in heat_terms and t not in mild_terms]
for i in range(12_500):
    lon, lat = r.uniform(minx, maxx), r.uniform(miny, maxy)
    while not shapely.contains_xy(outline, lon, lat):
        lon, lat = r.uniform(minx, maxx), r.uniform(miny, maxy)
    hotness = np.clip((45 - lat) / 20 + (lon < -100) * (-100 - lon) / 30, 0, 1.5)
    words = list(r.choice(filler, int(r.integers(4, 10))))
    if r.uniform() < 0.55:
        k = int(r.poisson(0.5 + 1.5 * hotness))
        words += list(r.choice(heat_words, k)) + list(r.choice(mild_terms, int(r.integers(0, 3))))
    r.shuffle(words)
    text = " ".join(words).capitalize() + r.choice(["!", ".", " 🥵", " #weather", "..."])
    how = r.uniform()
    tw = {"created_at": f"Fri Sep 24 {i % 24:02d}:{i % 60:02d}:00 +0000 2021", "id_str": str(1441000000000000000 + i),
          "text": text, "lang": "en", "coordinates": None, "place": None}
    if how < 0.5:
        tw["coordinates"] = {"type": "Point", "coordinates": [round(lon, 5), round(lat, 5)]}
    elif how < 0.7:
        d = 0.05
        tw["place"] = {"place_type": "city", "full_name": f"Place {i % 500}",
                       "bounding_box": {"type": "Polygon", "coordinates": [[[lon - d, lat - d], [lon + d, lat - d], [lon + d, lat + d], [lon - d, lat + d]]]}}
    tweets.append(tw)
with open("data/12500-tweets-2021-09-24_01-48-23.json", "w") as f:
    json.dump(tweets, f)
