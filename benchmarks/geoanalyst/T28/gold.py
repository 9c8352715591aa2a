from sklearn.ensemble import RandomForestRegressor
from sklearn.metrics import mean_squared_error, r2_score
from sklearn.model_selection import GridSearchCV, train_test_split
socio = pd.read_csv("data/socioeconomic_data.csv")
od = pd.read_csv("data/od_data.csv")
pairs = od.groupby(["Origin", "Destination"], as_index=False)["FlowVolume"].sum().rename(columns={"FlowVolume": "TotalFlow"})
merged = pairs.merge(socio, left_on="Origin", right_on="Subregion").merge(socio, left_on="Destination", right_on="Subregion", suffixes=("_Origin", "_Destination"))
merged = merged.drop(columns=["Subregion_Origin", "Subregion_Destination"])
print(merged.shape)
# %%
X = merged.drop(columns=["TotalFlow", "Origin", "Destination"])
y = merged["TotalFlow"]
X_train, X_test, y_train, y_test, od_train, od_test = train_test_split(X, y, merged[["Origin", "Destination"]], test_size=0.2, random_state=42)
grid = GridSearchCV(RandomForestRegressor(random_state=42), {"n_estimators": [50, 100], "max_depth": [None, 10], "min_samples_leaf": [1, 2]}, cv=5, scoring="neg_mean_squared_error", n_jobs=-1)
grid.fit(X_train, y_train)
print(grid.best_params_)
# %%
pred = grid.best_estimator_.predict(X_test)
pd.DataFrame({"metric": ["mse", "r2"], "value": [mean_squared_error(y_test, pred), r2_score(y_test, pred)]}).to_csv("pred_results/od_model_evaluation.csv", index=False)
out = od_test.assign(observed=y_test.to_numpy(), predicted=pred)
out.to_csv("pred_results/od_predictions.csv", index=False)
print(pd.read_csv("pred_results/od_model_evaluation.csv"))
