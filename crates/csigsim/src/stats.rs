//! Order statistics shared by the run summary, `csigsim compare`, the
//! reproductions and the benchmark: one definition of each, so that a
//! figure computed in two places is the same figure.

/// The `q` quantile of `sorted` (ascending) by nearest rank: the value at
/// rank ceil(n q), counting from 1 (the smallest for q = 0). None when
/// there are no values.
pub fn nearest_rank<T: Copy>(sorted: &[T], q: f64) -> Option<T> {
    if sorted.is_empty() {
        return None;
    }
    let rank = ((sorted.len() as f64 * q).ceil() as usize).clamp(1, sorted.len());
    Some(sorted[rank - 1])
}

/// The median of `sorted` (ascending): the middle value, or the mean of
/// the two middle ones; NaN when there are none.
pub fn median(sorted: &[f64]) -> f64 {
    match sorted.len() {
        0 => f64::NAN,
        n if n % 2 == 1 => sorted[n / 2],
        n => (sorted[n / 2 - 1] + sorted[n / 2]) / 2.0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nearest_rank_takes_the_value_at_rank_ceil_n_q() {
        let v: Vec<u64> = (1..=100).collect();
        assert_eq!(nearest_rank(&v, 0.5), Some(50));
        assert_eq!(nearest_rank(&v, 0.99), Some(99));
        assert_eq!(nearest_rank(&v, 0.991), Some(100));
        assert_eq!(nearest_rank(&v, 0.0), Some(1));
        assert_eq!(nearest_rank(&v, 1.0), Some(100));
        // Three values: the median rank is ceil(1.5) = 2, p99 the largest.
        assert_eq!(nearest_rank(&[10.0, 20.0, 30.0], 0.5), Some(20.0));
        assert_eq!(nearest_rank(&[10.0, 20.0, 30.0], 0.99), Some(30.0));
        assert_eq!(nearest_rank::<u64>(&[], 0.5), None);
    }

    #[test]
    fn median_averages_the_two_middle_values_of_an_even_count() {
        assert_eq!(median(&[1.0, 2.0, 7.0]), 2.0);
        assert_eq!(median(&[1.0, 2.0, 4.0, 7.0]), 3.0);
        assert_eq!(median(&[5.0]), 5.0);
        assert!(median(&[]).is_nan());
    }
}
