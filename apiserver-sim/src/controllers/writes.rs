//! The writes the controllers share: dropping a finalizer, and deleting an object (in the
//! background or with a given propagation) unless it is already being deleted.

use crate::machinery::resource_info::GroupResource;
use crate::store::{ObjKey, State};

/// Removes one finalizer from an object and persists it; a deleting object left with no
/// finalizers is removed.
pub(super) fn drop_finalizer(st: &mut State, key: &GroupResource, okey: &ObjKey, fin: &str) {
    let Some(obj) = st.get(key, okey) else { return };
    let mut fins = crate::machinery::meta::finalizers(&obj);
    if !fins.iter().any(|f| f == fin) {
        return;
    }
    fins.retain(|f| f != fin);
    let mut new = (*obj).clone();
    crate::machinery::meta::set_finalizers(&mut new, fins.clone());
    if fins.is_empty() && crate::machinery::meta::is_deleting(&new) && crate::ops::graceless(&new) {
        st.remove(key, okey);
    } else {
        st.put(key, new);
    }
}

/// Deletes an object in the background (honouring its finalizers); true if it changed.
pub(super) fn delete_background(st: &mut State, key: &GroupResource, okey: &ObjKey) -> bool {
    delete_with(st, key, okey, crate::ops::Propagation::Background)
}

/// Deletes an object with the given propagation (honouring its finalizers) unless it is
/// already being deleted; true if it changed.
pub(super) fn delete_with(
    st: &mut State,
    key: &GroupResource,
    okey: &ObjKey,
    propagation: crate::ops::Propagation,
) -> bool {
    let Some(info) = st.resource(key).map(|r| r.info.clone()) else {
        return false;
    };
    let Some(obj) = st.get(key, okey) else {
        return false;
    };
    if crate::machinery::meta::is_deleting(&obj) {
        return false;
    }
    let opts = crate::ops::DeleteOptions {
        propagation: Some(propagation),
        grace: Some(0),
        ..Default::default()
    };
    crate::ops::delete(st, &info, &okey.0, &okey.1, &opts).is_ok()
}
